import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { isAbsolute, normalize } from 'node:path';
import { pipeline } from 'node:stream/promises';
import {
  capitalized,
  fileKindName,
  type FileSlot,
  type IngestBody,
  type IngestFile,
} from '../../shared';
import { ApiError } from '../errors';
import { assertComplete, inspectFile } from '../media/inspect-file';
import type { HubClient } from '../sync/hub-client';
import { IngestState, type KnownFile } from './ingest-state';
import { Progress } from './progress';
import {
  META_FILE,
  scanFolder,
  type FoundFile,
  type ProjectFolder,
  type Skipped,
} from './scan-folder';

export interface IngestOptions {
  dir: string;
  /** Signed in (a session or a device token). */
  client: HubClient;
  /** The state file; by default one in the user's cache, keyed by server and folder. */
  statePath?: string;
  /** Used where a folder's portfolio.json does not say. */
  defaults: { memberBarcode?: string; category?: string };
  /** Most pixels of an image the server takes (checked here to skip such files early). */
  maxPixels: number;
  env: NodeJS.ProcessEnv;
  /** A line of the report (stdout). */
  print: (line: string) => void;
  /** Where progress goes (stderr). */
  progress?: NodeJS.WriteStream;
}

export interface IngestSummary {
  created: number;
  added: number;
  unchanged: number;
  failed: number;
  filesAdded: number;
  blobsSent: number;
  bytesSent: number;
  skipped: number;
}

/** A file ready to go: its bytes known, its place decided. */
interface Planned {
  file: FoundFile;
  known: KnownFile;
  slot: FileSlot;
}

/** The tail read for an image's end marker, as the server reads it. */
const TAIL_BYTES = 64 * 1024;
/** Blobs sent at the same time: the server's writes and fsyncs of one overlap the others' bytes. */
const UPLOADS_AT_ONCE = 4;
/** Examples listed per reason a file is skipped; the rest are counted. */
const EXAMPLES = 5;

/**
 * `portfolio ingest` (DESIGN §16): every file is hashed (and sniffed) first, the server is asked
 * which blobs it lacks, then each project folder's missing blobs are sent (resumably) and its
 * portfolio found or made with every file attached by sha256, one folder at a time. The state
 * file keeps hashes and finished folders, so a run cut short resumes; since the server finds the
 * portfolio by barcode and title and skips files it holds, a run again never duplicates.
 */
export async function runIngest(options: IngestOptions): Promise<IngestSummary> {
  const { client, print } = options;
  const scan = await scanFolder(options.dir);
  const statePath =
    options.statePath ?? IngestState.defaultPath(client.baseUrl, scan.root, options.env);
  const state = await IngestState.open(statePath, client.baseUrl, scan.root);
  const skipped: Skipped[] = [...scan.skipped];
  const summary: IngestSummary = {
    created: 0,
    added: 0,
    unchanged: 0,
    failed: 0,
    filesAdded: 0,
    blobsSent: 0,
    bytesSent: 0,
    skipped: 0,
  };
  if (scan.folders.length === 0) print(`No project folders in ${scan.root}: nothing to ingest.`);

  // 1. Hash and sniff every file (those unchanged since the last run are known already).
  const all = scan.folders.flatMap((folder) => folder.files);
  const hashing = new Progress(
    'Hashing',
    all.length,
    all.reduce((sum, file) => sum + file.size, 0),
    options.progress,
  );
  let savedMs = Date.now();
  const known = new Map<FoundFile, KnownFile>();
  for (const file of all) {
    let found = state.known(file);
    if (!found) {
      const read = await readFacts(file, options.maxPixels).catch(
        (error: NodeJS.ErrnoException) => {
          skipped.push({ key: file.key, reason: readFailure(error) });
          return undefined;
        },
      );
      if (read) state.remember(file, read);
      found = read && state.known(file);
      if (Date.now() - savedMs > 2000) {
        await state.save();
        savedMs = Date.now();
      }
    }
    hashing.add(file.size, 1);
    if (!found) continue;
    if (found.refused) skipped.push({ key: file.key, reason: found.refused });
    else known.set(file, found);
  }
  hashing.end();
  await state.save();

  // 2. Each folder's portfolio fields and files in their places.
  const plans: Array<{ folder: ProjectFolder; body: IngestBody; files: Planned[] }> = [];
  for (const folder of scan.folders) {
    try {
      const meta = await readMeta(folder);
      const files = placed(folder, known, meta.cover);
      if (files.length === 0) {
        print(`Skipped "${folder.name}": it holds no file a portfolio can take.`);
        continue;
      }
      const body = {
        portfolio: portfolioFields(folder, meta.fields, options.defaults),
        files: files.map(ingestFile),
      };
      plans.push({ folder, body, files });
    } catch (error) {
      summary.failed++;
      print(`Failed "${folder.name}": ${(error as Error).message}`);
    }
  }

  // 3. Which blobs the server lacks; then folder by folder, send them and attach every file.
  const unique = [...new Set(plans.flatMap((plan) => plan.files.map((item) => item.known.sha256)))];
  const missing = new Set(await client.missingBlobs(unique));
  const sizes = new Map(
    plans.flatMap((plan) =>
      plan.files.map((item) => [item.known.sha256, item.known.size] as const),
    ),
  );
  const sending = new Progress(
    'Sending',
    missing.size,
    [...missing].reduce((sum, sha) => sum + (sizes.get(sha) ?? 0), 0),
    options.progress,
  );
  for (const plan of plans) {
    const toSend = plan.files.filter((item) => missing.delete(item.known.sha256));
    await eachAtOnce(toSend, UPLOADS_AT_ONCE, async (item) => {
      const sent = await client.putBlob(item.known.sha256, item.file.path, (bytes) =>
        sending.add(bytes),
      );
      sending.add(0, 1);
      summary.blobsSent++;
      summary.bytesSent += sent;
    });
    const answer = await client.ingest(plan.body);
    const name = plan.folder.name;
    if (!answer.ok) {
      summary.failed++;
      print(`Failed "${name}": ${answer.message}`);
      continue;
    }
    const { result } = answer;
    summary.filesAdded += result.added;
    if (result.created) summary.created++;
    else if (result.added > 0) summary.added++;
    else summary.unchanged++;
    print(
      result.created
        ? `Made "${name}" with ${result.added} file(s).`
        : result.added > 0
          ? `Added ${result.added} file(s) to "${name}" (${result.kept} there already).`
          : `Unchanged "${name}": its ${result.kept} file(s) are there already.`,
    );
    state.markDone(name, {
      portfolioId: result.portfolioId,
      sha256s: plan.files.map((item) => item.known.sha256),
    });
    await state.save();
  }
  sending.end();

  summary.skipped = skipped.length;
  reportSkipped(skipped, print);
  return summary;
}

/** sha256 over the bytes, and what the server will take them for. */
async function readFacts(
  file: FoundFile,
  maxPixels: number,
): Promise<Omit<KnownFile, 'size' | 'mtimeMs' | 'ino'>> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file.path, { highWaterMark: 1024 * 1024 }), hash);
  const sha256 = hash.digest('hex');
  try {
    const tail = await tailOf(file.path, file.size);
    const inspection = assertComplete(
      await inspectFile(file.path, { size: file.size, tail, maxPixels, clientName: file.name }),
      tail,
    );
    if (inspection.kind === 'other') {
      return {
        sha256,
        refused: `${capitalized(fileKindName(inspection.mimeType, inspection.extension))}: not a kind of file a portfolio takes`,
      };
    }
    return { sha256, kind: inspection.kind };
  } catch (error) {
    if (error instanceof ApiError) return { sha256, refused: error.message };
    throw error;
  }
}

async function tailOf(path: string, size: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const length = Math.min(size, TAIL_BYTES);
    const tail = Buffer.alloc(length);
    await handle.read(tail, 0, length, size - length);
    return tail;
  } finally {
    await handle.close();
  }
}

function readFailure(error: NodeJS.ErrnoException): string {
  if (error.code === 'EACCES' || error.code === 'EPERM') return 'cannot be read (no permission)';
  if (error.code === 'ENOENT') return 'was removed while the folder was read';
  return `cannot be read (${error.code ?? error.message})`;
}

interface Meta {
  fields: Record<string, unknown>;
  cover?: string;
}

/** The folder's portfolio.json: portfolio fields, and optionally which file is the cover. */
async function readMeta(folder: ProjectFolder): Promise<Meta> {
  if (!folder.metaPath) return { fields: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(folder.metaPath, 'utf8'));
  } catch {
    throw new Error(`its ${META_FILE} is not valid JSON`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error(`its ${META_FILE} must hold one object of portfolio fields`);
  const { cover, ...fields } = parsed as Record<string, unknown>;
  if (cover !== undefined && typeof cover !== 'string')
    throw new Error(`"cover" in its ${META_FILE} must be the name of a file in the folder`);
  return { fields, cover };
}

/**
 * Each usable file's place: the cover (the one portfolio.json names, else the first image by
 * name), the other images drafting process, documents additional documents.
 */
function placed(
  folder: ProjectFolder,
  known: ReadonlyMap<FoundFile, KnownFile>,
  coverName: string | undefined,
): Planned[] {
  const usable = folder.files.flatMap((file) => {
    const found = known.get(file);
    return found ? [{ file, known: found }] : [];
  });
  let cover: FoundFile | undefined;
  if (coverName !== undefined) {
    const name = normalize(coverName).split('\\').join('/');
    if (isAbsolute(coverName) || name.startsWith('../') || name === '..') {
      throw new Error(
        `its ${META_FILE} names the cover "${coverName}", which is outside the folder`,
      );
    }
    const match = usable.find((item) => item.file.name === name);
    if (!match)
      throw new Error(
        `its ${META_FILE} names the cover "${coverName}", which is not a file in the folder`,
      );
    if (match.known.kind !== 'image') throw new Error(`the cover "${coverName}" is not an image`);
    cover = match.file;
  } else {
    cover = usable.find((item) => item.known.kind === 'image')?.file;
  }
  return usable.map(({ file, known: found }) => ({
    file,
    known: found,
    slot:
      file === cover ? 'cover' : found.kind === 'image' ? 'draftingProcess' : 'additionalDocument',
  }));
}

function portfolioFields(
  folder: ProjectFolder,
  fields: Record<string, unknown>,
  defaults: IngestOptions['defaults'],
): IngestBody['portfolio'] {
  const merged: Record<string, unknown> = {
    projectTitle: folder.name,
    ...(defaults.memberBarcode !== undefined && { memberBarcode: defaults.memberBarcode }),
    ...(defaults.category !== undefined && { category: defaults.category }),
    ...fields,
  };
  if (merged.memberBarcode === undefined)
    throw new Error(
      `no member barcode: give "memberBarcode" in its ${META_FILE}, or --member-barcode`,
    );
  if (merged.category === undefined)
    throw new Error(`no category: give "category" in its ${META_FILE}, or --category`);
  merged.projectDetail ??= merged.projectTitle;
  // The server checks every field; this only says which fields go where.
  return merged as IngestBody['portfolio'];
}

function ingestFile(item: Planned): IngestFile {
  return { slot: item.slot, sha256: item.known.sha256, originalFilename: item.file.name };
}

/** Skipped files by reason: a few names each and a count, never ten thousand lines. */
function reportSkipped(skipped: Skipped[], print: (line: string) => void): void {
  const byReason = new Map<string, string[]>();
  for (const item of skipped) {
    const keys = byReason.get(item.reason) ?? [];
    keys.push(item.key);
    byReason.set(item.reason, keys);
  }
  for (const [reason, keys] of byReason) {
    const shown = keys
      .slice(0, EXAMPLES)
      .map((key) => `"${key}"`)
      .join(', ');
    const more = keys.length > EXAMPLES ? ` and ${keys.length - EXAMPLES} more` : '';
    print(`Skipped ${keys.length} file(s), ${reason}: ${shown}${more}`);
  }
}

/** Runs `task` over `items`, at most `limit` at a time; the first failure fails the whole. */
async function eachAtOnce<T>(items: T[], limit: number, task: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
