import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { blobsOf, DUMP_PARTS, type LibraryDump } from '../storage/library-transfer';
import {
  BACKUP_ID,
  BackupInvalidError,
  blobOfEntry,
  BLOB_FOLDER,
  LIBRARY_FILE,
  MANIFEST_NAME,
  PARTIAL_PREFIX,
  parseManifest,
  partFile,
  type BackupManifest,
} from './manifest';

/** A backup's folder from what the user named: the folder itself or its `manifest.json`. */
export function backupFolder(path: string): string {
  const absolute = resolve(path);
  return basename(absolute) === MANIFEST_NAME ? dirname(absolute) : absolute;
}

export async function readManifest(folder: string): Promise<BackupManifest> {
  let text: string;
  try {
    text = await readFile(join(folder, MANIFEST_NAME), 'utf8');
  } catch {
    throw new BackupInvalidError(
      `${folder} is not a whole backup: it has no ${MANIFEST_NAME} (a backup that was interrupted, or another folder).`,
    );
  }
  return parseManifest(text);
}

async function sha256OfFile(path: string): Promise<string | undefined> {
  const hash = createHash('sha256');
  try {
    for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 }))
      hash.update(chunk as Buffer);
  } catch {
    return undefined;
  }
  return hash.digest('hex');
}

export interface VerifiedBackup {
  folder: string;
  manifest: BackupManifest;
}

/**
 * Re-hashes every file the manifest lists, blobs included, and checks that the data refers to
 * no file the backup lacks. Throws BackupInvalidError listing every problem found.
 */
export async function verifyBackup(path: string): Promise<VerifiedBackup> {
  const folder = backupFolder(path);
  const manifest = await readManifest(folder);
  const problems: string[] = [];
  for (const [entry, sha256] of Object.entries(manifest.files)) {
    const actual = await sha256OfFile(join(folder, entry));
    if (actual === undefined) problems.push(`${entry} is missing`);
    else if (actual !== sha256) problems.push(`${entry} is damaged: its content has changed`);
  }
  if (problems.length === 0) {
    const dump = await readBackupDump(folder);
    const listed = new Set(Object.keys(manifest.files).map(blobOfEntry));
    for (const sha256 of blobsOf(dump))
      if (!listed.has(sha256)) problems.push(`the file ${sha256} is referred to but not in it`);
    if (dump.library.libraryId !== manifest.libraryId || dump.library.seq !== manifest.seq)
      problems.push('its library does not match its manifest');
    if (dump.portfolios.length !== manifest.counts.portfolios)
      problems.push('it holds another number of portfolios than its manifest says');
  }
  if (problems.length > 0)
    throw new BackupInvalidError(
      `The backup ${folder} is damaged and cannot be used: ${problems.slice(0, 5).join('; ')}` +
        `${problems.length > 5 ? `; and ${problems.length - 5} more` : ''}.`,
      problems,
    );
  return { folder, manifest };
}

async function readLines<T>(path: string): Promise<T[]> {
  const items: T[] = [];
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) if (line !== '') items.push(JSON.parse(line) as T);
  return items;
}

/** The library a (verified) backup holds. */
export async function readBackupDump(folder: string): Promise<LibraryDump> {
  const [library] = await readLines<LibraryDump['library']>(join(folder, LIBRARY_FILE));
  if (!library) throw new BackupInvalidError(`${folder} holds no library.`);
  const dump = { library } as LibraryDump;
  for (const part of DUMP_PARTS)
    (dump as unknown as Record<string, unknown[]>)[part] = await readLines(
      join(folder, partFile(part)),
    );
  return dump;
}

/** Where a backup's blob is: the target's shared blob folder, beside the backup's folder. */
export const backupBlobPath = (folder: string, sha256: string) =>
  join(dirname(folder), BLOB_FOLDER, sha256);

export interface ListedBackup {
  backupId: string;
  path: string;
  seq: number;
  createdTime: number;
  sizeBytes: number;
  libraryId: string;
  counts: BackupManifest['counts'];
}

/**
 * The whole backups in `target`, newest first: folders with a readable manifest. A partial
 * folder (being written, or left by a kill) is never listed.
 */
export async function listBackups(target: string): Promise<ListedBackup[]> {
  const names = await readdir(target).catch(() => [] as string[]);
  const found: ListedBackup[] = [];
  for (const name of names) {
    if (!BACKUP_ID.test(name)) continue;
    const path = join(target, name);
    const manifest = await readManifest(path).catch(() => undefined);
    if (!manifest) continue;
    found.push({
      backupId: name,
      path,
      seq: manifest.seq,
      createdTime: manifest.createdTime,
      sizeBytes: manifest.sizeBytes,
      libraryId: manifest.libraryId,
      counts: manifest.counts,
    });
  }
  return found.sort(
    (a, b) => b.createdTime - a.createdTime || b.backupId.localeCompare(a.backupId),
  );
}

/** Blobs and partial folders younger than this are left alone: a backup may be writing them. */
const IN_USE_GRACE_MS = 60 * 60 * 1000;

/**
 * Retention: keeps the newest `keep` backups of `target`, removes the others (each renamed out
 * of view first, so a kill never leaves half of one that looks whole), the partial folders an
 * interrupted backup left, and the blobs no kept backup lists.
 */
export async function pruneBackups(
  target: string,
  keep: number,
  now = Date.now(),
): Promise<{ removed: string[]; blobs: number }> {
  const backups = await listBackups(target);
  const removed: string[] = [];
  for (const backup of backups.slice(Math.max(keep, 1))) {
    const doomed = join(target, `${PARTIAL_PREFIX}${backup.backupId}.removed`);
    await rename(backup.path, doomed);
    await rm(doomed, { recursive: true, force: true });
    removed.push(backup.backupId);
  }
  for (const name of await readdir(target)) {
    if (!name.startsWith(PARTIAL_PREFIX)) continue;
    const path = join(target, name);
    const info = await stat(path).catch(() => undefined);
    if (info && (name.endsWith('.removed') || now - info.mtimeMs > IN_USE_GRACE_MS))
      await rm(path, { recursive: true, force: true });
  }
  const referenced = new Set<string>();
  for (const backup of await listBackups(target)) {
    const manifest = await readManifest(backup.path).catch(() => undefined);
    for (const entry of Object.keys(manifest?.files ?? {})) {
      const sha256 = blobOfEntry(entry);
      if (sha256) referenced.add(sha256);
    }
  }
  let blobs = 0;
  const blobDir = join(target, BLOB_FOLDER);
  for (const name of await readdir(blobDir).catch(() => [] as string[])) {
    if (referenced.has(name)) continue;
    const path = join(blobDir, name);
    const info = await stat(path).catch(() => undefined);
    if (!info || now - info.mtimeMs <= IN_USE_GRACE_MS) continue;
    await rm(path, { force: true });
    blobs++;
  }
  return { removed, blobs };
}
