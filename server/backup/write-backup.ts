import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { syncDirectory } from '../storage/durable-file';
import { blobsOf, DUMP_PARTS, type LibraryDump } from '../storage/library-transfer';
import {
  BACKUP_FORMAT_VERSION,
  BLOB_FOLDER,
  blobEntry,
  LIBRARY_FILE,
  MANIFEST_NAME,
  PARTIAL_PREFIX,
  partFile,
  type BackupManifest,
} from './manifest';

/** Where a backup is between its steps; a test may stop it at one (`pauseAt`). */
export type BackupStep = 'blobs' | 'data' | 'manifest';

export interface BackupProgress {
  step: BackupStep;
  /** Blobs handled so far, of `total`. */
  done: number;
  total: number;
  /** Bytes copied into the target so far (blobs the target already had cost none). */
  bytes: number;
}

export interface WriteBackupOptions {
  /** The target folder: backups and their shared blob folder live in it. */
  target: string;
  /** The library at one seq (`StorageBackend.dumpLibrary`). */
  dump: LibraryDump;
  /** Where the blob with this sha256 is read from (the data directory's blob store). */
  blobPath: (sha256: string) => string;
  productVersion: string;
  /** The id (and folder name) to use; default a new one (`newBackupId`). */
  backupId?: string;
  now?: () => number;
  onProgress?: (progress: BackupProgress) => void;
  /** Test seam: awaited as each step starts (a test kills the process there). */
  pauseAt?: (step: BackupStep) => Promise<void>;
}

export interface WrittenBackup {
  backupId: string;
  path: string;
  manifest: BackupManifest;
}

/** A backup could not be written (disk full, no access, a damaged source blob); nothing was kept. */
export class BackupWriteError extends Error {
  override readonly name = 'BackupWriteError';
  constructor(
    message: string,
    /** The backup folder's disk is full (ENOSPC): the API answers 507 then. */
    readonly diskFull = false,
  ) {
    super(message);
  }
}

/** `backup-20260127T031500Z-1a2b`: sorts by time, and two made the same second still differ. */
export function newBackupId(now: number): string {
  const stamp = new Date(now)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `backup-${stamp}-${randomBytes(2).toString('hex')}`;
}

/**
 * Writes `dump` and every blob it refers to as one backup in `target` (DESIGN §11). The backup
 * is assembled in `<target>/.partial-<id>/` and renamed to `<target>/<id>/` only once every file,
 * the manifest last, is fsync'd: a kill or a full disk leaves no folder that looks like a backup,
 * and an error removes the partial one. Blobs go first, each to a temp name, checked against its
 * sha256 on the way and renamed into `<target>/blobs/` (a blob there already is reused: that is
 * what makes a backup incremental).
 */
export async function writeBackup(options: WriteBackupOptions): Promise<WrittenBackup> {
  const now = options.now ?? Date.now;
  const createdTime = now();
  const backupId = options.backupId ?? newBackupId(createdTime);
  const blobDir = join(options.target, BLOB_FOLDER);
  const partial = join(options.target, `${PARTIAL_PREFIX}${backupId}`);
  const final = join(options.target, backupId);
  try {
    await mkdir(blobDir, { recursive: true });
    await mkdir(partial);
    const files: Record<string, string> = {};
    let sizeBytes = 0;

    await options.pauseAt?.('blobs');
    const blobs = blobsOf(options.dump);
    const progress: BackupProgress = { step: 'blobs', done: 0, total: blobs.length, bytes: 0 };
    options.onProgress?.({ ...progress });
    for (const sha256 of blobs) {
      const { size, copied } = await storeBlob(blobDir, sha256, options.blobPath(sha256));
      files[blobEntry(sha256)] = sha256;
      sizeBytes += size;
      progress.done++;
      if (copied) progress.bytes += size;
      options.onProgress?.({ ...progress });
    }
    await syncDirectory(blobDir);

    await options.pauseAt?.('data');
    options.onProgress?.({ ...progress, step: 'data' });
    const { dump } = options;
    const written = await writeLines(join(partial, LIBRARY_FILE), [dump.library]);
    files[LIBRARY_FILE] = written.sha256;
    sizeBytes += written.bytes;
    for (const part of DUMP_PARTS) {
      const file = await writeLines(join(partial, partFile(part)), dump[part]);
      files[partFile(part)] = file.sha256;
      sizeBytes += file.bytes;
    }

    await options.pauseAt?.('manifest');
    options.onProgress?.({ ...progress, step: 'manifest' });
    const manifest: BackupManifest = {
      formatVersion: BACKUP_FORMAT_VERSION,
      productVersion: options.productVersion,
      libraryId: dump.library.libraryId,
      seq: dump.library.seq,
      createdTime,
      counts: {
        portfolios: dump.portfolios.length,
        revisions: dump.revisions.length,
        files: blobs.length,
        trash: dump.trash.length,
        users: dump.users.length,
      },
      sizeBytes,
      files,
    };
    await writeLines(join(partial, MANIFEST_NAME), [manifest], 2);
    await syncDirectory(partial);
    await rename(partial, final);
    await syncDirectory(options.target);
    return { backupId, path: final, manifest };
  } catch (error) {
    await rm(partial, { recursive: true, force: true }).catch(() => {});
    const diskFull = (error as NodeJS.ErrnoException).code === 'ENOSPC';
    throw new BackupWriteError(writeFailure(error, options.target), diskFull);
  }
}

/** The error in words for the person who asked for the backup. */
function writeFailure(error: unknown, target: string): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC')
    return `The backup folder's disk is full (${target}); nothing was kept. Free some space or choose another folder.`;
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS')
    return `The backup folder cannot be written (${target}); nothing was kept.`;
  if (error instanceof BackupWriteError) return error.message;
  return `The backup failed and nothing was kept: ${(error as Error).message}`;
}

/**
 * Puts one blob in the target's blob folder unless it is there already; answers its size and
 * whether it was copied. A blob reused gets a new modification time, so a retention pass of
 * another backup in the same target leaves it (it removes only blobs untouched for a while).
 */
async function storeBlob(
  blobDir: string,
  sha256: string,
  source: string,
): Promise<{ size: number; copied: boolean }> {
  const dest = join(blobDir, sha256);
  const existing = await stat(dest).catch(() => undefined);
  if (existing) {
    const time = new Date();
    await utimes(dest, time, time);
    return { size: existing.size, copied: false };
  }
  const temp = join(blobDir, `.${sha256}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', 0o600);
  let size = 0;
  try {
    const hash = createHash('sha256');
    let input;
    try {
      input = createReadStream(source, { highWaterMark: 1024 * 1024 });
      for await (const chunk of input as AsyncIterable<Buffer>) {
        hash.update(chunk);
        await handle.write(chunk);
        size += chunk.length;
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT')
        throw new BackupWriteError(
          `The file ${sha256} is missing from the library's blob folder; nothing was kept.`,
        );
      throw error;
    }
    if (hash.digest('hex') !== sha256)
      throw new BackupWriteError(
        `The file ${sha256} in the library's blob folder is damaged (its content does not match its name); nothing was kept.`,
      );
    await handle.sync();
    await handle.close();
    await rename(temp, dest);
    return { size, copied: true };
  } catch (error) {
    await handle.close().catch(() => {});
    await rm(temp, { force: true });
    throw error;
  }
}

const FLUSH_BYTES = 1024 * 1024;

/** Writes one JSON value per line (or one indented value), fsync'd; answers its sha256 and size. */
async function writeLines(
  path: string,
  items: readonly unknown[],
  indent?: number,
): Promise<{ sha256: string; bytes: number }> {
  const handle = await open(path, 'wx', 0o600);
  const hash = createHash('sha256');
  let bytes = 0;
  let buffer: string[] = [];
  let buffered = 0;
  const flush = async () => {
    const chunk = Buffer.from(buffer.join(''));
    buffer = [];
    buffered = 0;
    hash.update(chunk);
    bytes += chunk.length;
    await handle.write(chunk);
  };
  try {
    for (const item of items) {
      const line = `${JSON.stringify(item, null, indent)}\n`;
      buffer.push(line);
      buffered += line.length;
      if (buffered >= FLUSH_BYTES) await flush();
    }
    await flush();
    await handle.sync();
  } finally {
    await handle.close();
  }
  return { sha256: hash.digest('hex'), bytes };
}
