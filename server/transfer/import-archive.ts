import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import {
  EXPORT_FORMAT_VERSION,
  ExportedPortfolioSchema,
  ExportManifestSchema,
  type ExportedPortfolio,
  type ExportManifest,
} from '../../shared';
import { ApiError } from '../errors';
import { bodyValidator } from '../validation/body-validator';

/** What an import may unpack: bounds against zip bombs (DESIGN §11). */
export interface ArchiveLimits {
  /** Largest file entry (its declared and its real size), in bytes. */
  entryBytes: number;
  /** Largest JSON entry (a portfolio with its history, or the manifest). */
  jsonBytes: number;
  /** All entries together, unpacked. */
  totalBytes: number;
  /** Entries at most. */
  entries: number;
}

/** One portfolio's entry of a checked ZIP. */
export interface CheckedPortfolioEntry {
  portfolioId: string;
  /** The sha256 of its JSON bytes. */
  sha256: string;
  entry: Entry;
}

/**
 * A ZIP checked whole: every name, size and hash; the JSON parsed and validated. It stays open
 * so that each portfolio is read again from it, one at a time, to be applied (none is held in
 * memory, nor unpacked to a file of its own): `close()` it when done.
 */
export interface CheckedArchive {
  manifest: ExportManifest;
  portfolios: CheckedPortfolioEntry[];
  /** Each blob's unpacked, fsync'd file, by the sha256 it was named by (and has). */
  blobs: Map<string, string>;
  /** A portfolio read again from the ZIP; its bytes must still be those that were checked. */
  readPortfolio(portfolio: CheckedPortfolioEntry): Promise<ExportedPortfolio>;
  close(): void;
}

const PORTFOLIO_ENTRY = /^portfolios\/([A-Za-z0-9][A-Za-z0-9_-]{0,63})\.json$/;
const FILE_ENTRY = /^files\/([0-9a-f]{64})$/;

const validateManifest = bodyValidator(ExportManifestSchema);
const validatePortfolio = bodyValidator(ExportedPortfolioSchema);

/**
 * Unpacks and checks an export ZIP (at `zipPath`) into `dir`, refusing it whole with a 4xx at
 * the first thing wrong: not a complete ZIP, an entry named outside the archive, over a size
 * bound (declared or real), a file whose bytes are not the sha256 it is named by, a manifest of
 * a newer format, JSON of the wrong shape. Nothing outside `dir` is written; the caller removes
 * `dir` in any case. Only one entry is read at a time, and only JSON is held in memory, one
 * entry at a time. Blobs are unpacked into `dir/files`; portfolios stay in the ZIP.
 */
export async function checkArchive(
  zipPath: string,
  dir: string,
  limits: ArchiveLimits,
): Promise<CheckedArchive> {
  // The manifest first, wherever it lies in the ZIP: a newer format is told as such, not as
  // the faults its other entries would have in this version's eyes.
  const manifest = checkedManifest(await manifestOf(zipPath, limits));
  const zip = await openZip(zipPath);
  let checked = false;
  try {
    if (zip.entryCount > limits.entries) {
      throw tooLarge(
        `The ZIP holds ${zip.entryCount} entries; an import takes at most ${limits.entries}.`,
      );
    }
    await mkdir(join(dir, 'files'), { recursive: true });
    const portfolios: CheckedPortfolioEntry[] = [];
    const portfolioIds = new Set<string>();
    const blobs = new Map<string, string>();
    const hashes = new Map<string, string>();
    let declaredTotal = 0;
    for await (const entry of entries(zip)) {
      const name = entry.fileName;
      if (name.endsWith('/')) continue; // a folder entry, as the zip tool writes them
      declaredTotal += entry.uncompressedSize;
      if (declaredTotal > limits.totalBytes) {
        throw tooLarge(
          `The ZIP unpacks to more than ${megabytes(limits.totalBytes)}, the most an import takes.`,
        );
      }
      const file = FILE_ENTRY.exec(name);
      const portfolio = PORTFOLIO_ENTRY.exec(name);
      if (file) {
        const sha256 = file[1]!;
        if (blobs.has(sha256)) throw invalid(`The ZIP holds "${name}" twice.`);
        assertEntrySize(entry, limits.entryBytes);
        const path = join(dir, 'files', sha256);
        const actual = await unpackFile(zip, entry, path, limits.entryBytes);
        if (actual !== sha256) {
          throw new ApiError(
            'ARCHIVE_HASH_MISMATCH',
            `The file "${name}" in the ZIP is not the file it is named by (its bytes differ); nothing was imported.`,
            [{ field: name, message: 'its bytes do not have this sha256' }],
          );
        }
        blobs.set(sha256, path);
        hashes.set(name, sha256);
      } else if (portfolio) {
        assertEntrySize(entry, limits.jsonBytes);
        const bytes = await readEntry(zip, entry, limits.jsonBytes);
        const portfolioId = portfolio[1]!;
        const parsed = checkedPortfolio(bytes, name);
        if (parsed.portfolioId !== portfolioId) {
          throw invalid(
            `"${name}" holds the portfolio "${parsed.portfolioId}", not "${portfolioId}".`,
          );
        }
        if (portfolioIds.has(portfolioId)) throw invalid(`The ZIP holds "${name}" twice.`);
        portfolioIds.add(portfolioId);
        const sha256 = sha256Of(bytes);
        portfolios.push({ portfolioId, sha256, entry });
        hashes.set(name, sha256);
      } else if (name !== 'manifest.json') {
        throw invalid(
          nameEscapes(name)
            ? `The ZIP holds an entry named "${name}", which points outside the archive.`
            : `The ZIP holds "${name}", which an export never has (only manifest.json, portfolios/ and files/).`,
        );
      }
    }
    for (const [name, sha256] of hashes) {
      const listed = manifest.files[name];
      if (listed !== undefined && listed !== sha256) {
        throw new ApiError(
          'ARCHIVE_HASH_MISMATCH',
          `"${name}" in the ZIP differs from what its manifest says it holds; nothing was imported.`,
          [{ field: name, message: 'differs from the sha256 in manifest.json' }],
        );
      }
    }
    checked = true;
    return {
      manifest,
      portfolios,
      blobs,
      async readPortfolio({ entry, sha256 }) {
        const bytes = await readEntry(zip, entry, limits.jsonBytes);
        if (sha256Of(bytes) !== sha256) {
          throw new ApiError(
            'ARCHIVE_HASH_MISMATCH',
            `"${entry.fileName}" changed while it was imported; the import stopped.`,
          );
        }
        return JSON.parse(bytes.toString('utf8')) as ExportedPortfolio;
      },
      close: () => zip.close(),
    };
  } finally {
    if (!checked) zip.close();
  }
}

/** The text of the ZIP's one manifest.json (only the central directory and that entry are read). */
async function manifestOf(zipPath: string, limits: ArchiveLimits): Promise<string> {
  const zip = await openZip(zipPath);
  try {
    let text: string | undefined;
    for await (const entry of entries(zip)) {
      if (entry.fileName !== 'manifest.json') continue;
      if (text !== undefined) throw invalid('The ZIP holds two manifest.json entries.');
      assertEntrySize(entry, limits.jsonBytes);
      text = (await readEntry(zip, entry, limits.jsonBytes)).toString('utf8');
    }
    if (text === undefined)
      throw invalid('The ZIP has no manifest.json: it is not an export of Portfolio Manager.');
    return text;
  } finally {
    zip.close();
  }
}

export async function removeArchiveDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

function checkedManifest(text: string): ExportManifest {
  const raw = parseJson(text, 'manifest.json');
  // The version first: a newer format may differ in every other field.
  const version = (raw as { formatVersion?: unknown } | null)?.formatVersion;
  if (typeof version === 'number' && version > EXPORT_FORMAT_VERSION) {
    throw new ApiError(
      'ARCHIVE_FORMAT_TOO_NEW',
      `This export was made by a newer version of Portfolio Manager (format ${version}; this one reads up to ${EXPORT_FORMAT_VERSION}). Update this app, then import it again.`,
    );
  }
  return inFile('manifest.json', () => validateManifest(raw));
}

function checkedPortfolio(bytes: Buffer, name: string): ExportedPortfolio {
  const raw = parseJson(bytes.toString('utf8'), name);
  return inFile(name, () => validatePortfolio(raw));
}

/** A validation failure, told as a fault of one file of the ZIP. */
function inFile<T>(name: string, validate: () => T): T {
  try {
    return validate();
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const rename = (text: string | undefined) => text?.replace(/^body/, name);
    throw new ApiError(
      'INVALID_ARCHIVE',
      `${name} in the ZIP is not valid: ${error.message.replace(/^body\.?/, '') || 'wrong shape'}.`,
      error.details.map((detail) => ({ ...detail, field: rename(detail.field) ?? name })),
    );
  }
}

function parseJson(text: string, name: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw invalid(`${name} in the ZIP is not valid JSON.`);
  }
}

function openZip(path: string): Promise<ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.open(
      path,
      { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: true },
      (error, zip) => (error ? reject(zipError(error)) : resolve(zip)),
    );
  });
}

/** The entries one at a time: the next is read only when the caller asks for it. */
async function* entries(zip: ZipFile): AsyncGenerator<Entry> {
  for (;;) {
    const next = await new Promise<Entry | null>((resolve, reject) => {
      const onEntry = (entry: Entry) => done(() => resolve(entry));
      const onEnd = () => done(() => resolve(null));
      const onError = (error: Error) => done(() => reject(zipError(error)));
      const done = (settle: () => void) => {
        zip.off('entry', onEntry).off('end', onEnd).off('error', onError);
        settle();
      };
      zip.on('entry', onEntry).on('end', onEnd).on('error', onError);
      zip.readEntry();
    });
    if (next === null) return;
    yield next;
  }
}

function entryStream(zip: ZipFile, entry: Entry): Promise<Readable> {
  return new Promise((resolve, reject) =>
    zip.openReadStream(entry, (error, stream) =>
      error ? reject(zipError(error)) : resolve(stream),
    ),
  );
}

/** Unpacks a file entry to `path` (fsync'd), counting its real size; answers its sha256. */
async function unpackFile(
  zip: ZipFile,
  entry: Entry,
  path: string,
  maxBytes: number,
): Promise<string> {
  const hash = createHash('sha256');
  let seen = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > maxBytes) return callback(entryTooLarge(entry.fileName, maxBytes));
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  const out = createWriteStream(path, { flags: 'wx' });
  await pipeline(await entryStream(zip, entry), counter, out).catch((error: unknown) => {
    throw error instanceof ApiError ? error : zipError(error as Error);
  });
  const handle = await open(path, 'r+');
  await handle.sync().finally(() => handle.close());
  return hash.digest('hex');
}

async function readEntry(zip: ZipFile, entry: Entry, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let seen = 0;
  try {
    for await (const chunk of await entryStream(zip, entry)) {
      seen += (chunk as Buffer).length;
      if (seen > maxBytes) throw entryTooLarge(entry.fileName, maxBytes);
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    throw error instanceof ApiError ? error : zipError(error as Error);
  }
  return Buffer.concat(chunks);
}

function assertEntrySize(entry: Entry, maxBytes: number): void {
  if (entry.uncompressedSize > maxBytes) throw entryTooLarge(entry.fileName, maxBytes);
}

function entryTooLarge(name: string, maxBytes: number): ApiError {
  return tooLarge(
    `"${name}" in the ZIP unpacks to more than ${megabytes(maxBytes)}, the most one entry may hold.`,
  );
}

function tooLarge(message: string): ApiError {
  return new ApiError('ARCHIVE_TOO_LARGE', message);
}

function invalid(message: string): ApiError {
  return new ApiError('INVALID_ARCHIVE', message);
}

/** Whether a name points outside the folder it is unpacked into. */
function nameEscapes(name: string): boolean {
  return (
    name.startsWith('/') ||
    name.startsWith('\\') ||
    /^[A-Za-z]:/.test(name) ||
    name.split(/[\\/]/).includes('..')
  );
}

/**
 * yauzl's errors in plain words: a name trick, or a file that is not a whole ZIP. A system error
 * (a full disk while unpacking) is no fault of the ZIP and stays what it is.
 */
function zipError(error: Error): Error {
  if ((error as NodeJS.ErrnoException).code !== undefined) return error;
  const named =
    /(?:invalid relative path|absolute path|invalid characters in fileName): (.*)$/.exec(
      error.message,
    );
  if (/too many bytes in the stream|expected \d+\. got/i.test(error.message)) {
    return invalid(
      'An entry in the ZIP unpacks to more than it declares (a zip bomb, or a damaged file); nothing was imported.',
    );
  }
  if (named) {
    return invalid(`The ZIP holds an entry named "${named[1]}", which points outside the archive.`);
  }
  return invalid(
    'The file is not a complete ZIP: it may be cut short or damaged. Export it again.',
  );
}

function megabytes(bytes: number): string {
  return `${Math.floor(bytes / 1_000_000)} MB`;
}

function sha256Of(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
