/**
 * What a backup folder holds and how its `manifest.json` reads (DESIGN §11). A target folder
 * holds one folder per backup and one blob folder they all share:
 *
 * ```
 * <target>/<backupId>/manifest.json      written last: a folder without it is no backup
 * <target>/<backupId>/library.json       libraryId, seq, feed horizon
 * <target>/<backupId>/<part>.jsonl       portfolios, revisions, trash, tombstones, users
 * <target>/blobs/<sha256>                every file's bytes, shared by the target's backups
 * <target>/.partial-<backupId>/          a backup being written (or one a kill interrupted)
 * ```
 *
 * Blobs are named by their content, so a backup copies only those no earlier backup in the
 * target has: incremental by construction. In the manifest's `files`, a blob is listed as
 * `../blobs/<sha256>`, relative to the backup's own folder like every other entry.
 */
import { DUMP_PARTS, type DumpPart } from '../storage/library-transfer';

export const BACKUP_FORMAT_VERSION = 1;
export const MANIFEST_NAME = 'manifest.json';
export const LIBRARY_FILE = 'library.json';
export const BLOB_FOLDER = 'blobs';
export const PARTIAL_PREFIX = '.partial-';

export const partFile = (part: DumpPart) => `${part}.jsonl`;
export const blobEntry = (sha256: string) => `../${BLOB_FOLDER}/${sha256}`;
/** Every data file a backup has, in the order they are written. */
export const DATA_FILES = [LIBRARY_FILE, ...DUMP_PARTS.map(partFile)];

const SHA256 = /^[0-9a-f]{64}$/;
const BLOB_ENTRY = /^\.\.\/blobs\/([0-9a-f]{64})$/;
/** A backup's id is also its folder's name: `backup-20260127T031500Z-1a2b`. */
export const BACKUP_ID = /^backup-\d{8}T\d{6}Z-[0-9a-f]{4,}$/;

export interface BackupCounts {
  portfolios: number;
  revisions: number;
  /** Blobs: the distinct files' bytes. */
  files: number;
  trash: number;
  users: number;
}

export interface BackupManifest {
  formatVersion: number;
  productVersion: string;
  libraryId: string;
  seq: number;
  createdTime: number;
  counts: BackupCounts;
  /** Bytes of every file listed, blobs included (shared ones counted in each backup). */
  sizeBytes: number;
  /** Relative path → sha256 of its bytes. */
  files: Record<string, string>;
}

/** The blob a manifest entry names, or undefined for a data file. */
export function blobOfEntry(path: string): string | undefined {
  return BLOB_ENTRY.exec(path)?.[1];
}

/** A backup that cannot be used: unreadable, damaged, incomplete or from a newer version. */
export class BackupInvalidError extends Error {
  override readonly name = 'BackupInvalidError';
  constructor(
    message: string,
    readonly problems: string[] = [],
  ) {
    super(message);
  }
}

const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/**
 * Reads a manifest's text, checking every field's type and every file entry's name (only the
 * data files above and `../blobs/<sha256>`: a manifest cannot point a reader anywhere else).
 */
export function parseManifest(text: string): BackupManifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BackupInvalidError('The backup manifest is not readable JSON.');
  }
  const bad = (what: string) => new BackupInvalidError(`The backup manifest is damaged: ${what}.`);
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw bad('it is not an object');
  const manifest = value as Record<string, unknown>;
  if (!isCount(manifest.formatVersion)) throw bad('formatVersion is missing');
  if (manifest.formatVersion > BACKUP_FORMAT_VERSION)
    throw new BackupInvalidError(
      `This backup was made by a newer version of Portfolio Manager (backup format ` +
        `${manifest.formatVersion}); update this one to restore it.`,
    );
  if (typeof manifest.productVersion !== 'string') throw bad('productVersion is missing');
  if (typeof manifest.libraryId !== 'string' || manifest.libraryId === '')
    throw bad('libraryId is missing');
  for (const field of ['seq', 'createdTime', 'sizeBytes'] as const)
    if (!isCount(manifest[field])) throw bad(`${field} is not a whole number`);
  const counts = manifest.counts as Record<string, unknown> | null;
  if (counts === null || typeof counts !== 'object') throw bad('counts are missing');
  for (const field of ['portfolios', 'revisions', 'files', 'trash', 'users'] as const)
    if (!isCount(counts[field])) throw bad(`counts.${field} is not a whole number`);
  const files = manifest.files as Record<string, unknown> | null;
  if (files === null || typeof files !== 'object' || Array.isArray(files))
    throw bad('the file list is missing');
  for (const [path, sha256] of Object.entries(files)) {
    if (!DATA_FILES.includes(path) && blobOfEntry(path) === undefined)
      throw bad(`it lists a file it may not hold ("${path}")`);
    if (typeof sha256 !== 'string' || !SHA256.test(sha256))
      throw bad(`the checksum of ${path} is not a sha256`);
    const blob = blobOfEntry(path);
    if (blob !== undefined && blob !== sha256) throw bad(`${path} is listed under another hash`);
  }
  for (const path of DATA_FILES) if (!(path in files)) throw bad(`${path} is not listed`);
  return manifest as unknown as BackupManifest;
}
