import { randomBytes, randomUUID } from 'node:crypto';
import { access, mkdir, readdir, readFile, rename, rm, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type pg from 'pg';
import { syncDirectory, writeFileDurably } from '../storage/durable-file';
import { acquireDataDirLock } from '../storage/embedded/data-dir-lock';
import {
  blobsOf,
  copyBlobsFrom,
  importEmbedded,
  importPostgres,
  postgresHoldsData,
  type LibraryDump,
} from '../storage/library-transfer';
import { backupBlobPath, readBackupDump, verifyBackup } from './read-backup';
import type { BackupManifest } from './manifest';

/** The target already holds a library, and `force` was not given: nothing was changed. */
export class RestoreTargetInUseError extends Error {
  override readonly name = 'RestoreTargetInUseError';
}

export interface RestoreResult {
  manifest: BackupManifest;
  /** The restored library's new id (DESIGN §11: replicas then resync). */
  libraryId: string;
}

/** Steps a test may stop a restore at, to kill it there. */
export type RestoreStep = 'staged' | 'swap' | 'swapping';

export interface RestoreOptions {
  /** Replace a target that holds a library. */
  force?: boolean;
  pauseAt?: (step: RestoreStep) => Promise<void>;
}

/** Verifies the backup, reads it and gives the library a new id. */
async function loadBackup(
  path: string,
): Promise<{ manifest: BackupManifest; folder: string; dump: LibraryDump }> {
  const { folder, manifest } = await verifyBackup(path);
  const dump = await readBackupDump(folder);
  dump.library = { ...dump.library, libraryId: randomUUID() };
  return { manifest, folder, dump };
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** The marker a swap leaves while it moves folders: `<parent>/.<name>.restore-swap`. */
const swapMarker = (target: string) => join(dirname(target), `.${basename(target)}.restore-swap`);

interface SwapPlan {
  staging: string;
  old: string;
}

/**
 * Finishes a swap a kill interrupted (between or after its two renames), and removes what a
 * restore killed before its swap staged. The marker is written only once the staged library is
 * complete, so a missing target is finished from it. If a target was made meanwhile (a server
 * started on the missing folder), neither copy is touched: the person decides.
 */
export async function recoverInterruptedRestore(target: string): Promise<void> {
  const marker = swapMarker(target);
  const plan = await readFile(marker, 'utf8').then(
    (text) => JSON.parse(text) as SwapPlan,
    () => undefined,
  );
  if (plan) {
    const [hasTarget, hasStaging] = await Promise.all([exists(target), exists(plan.staging)]);
    if (!hasTarget) await rename(hasStaging ? plan.staging : plan.old, target);
    else if (hasStaging && (await exists(plan.old)))
      throw new RestoreTargetInUseError(
        `An interrupted restore left the restored library in ${plan.staging} and the one before ` +
          `it in ${plan.old}, and ${target} was made since. Move the one you want to keep to ` +
          `${target} and delete ${marker}; nothing was changed.`,
      );
    await syncDirectory(dirname(target));
    await unlink(marker);
    await rm(plan.old, { recursive: true, force: true });
  }
  // Staged by a restore killed before its swap: never the library a swap moved aside.
  const staged = new RegExp(`^${escapeRegExp(basename(target))}\\.restore-[0-9a-f]{8}$`);
  for (const name of await readdir(dirname(target)).catch(() => [] as string[]))
    if (staged.test(name)) await rm(join(dirname(target), name), { recursive: true, force: true });
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Restores a backup into a data directory no server is using (DESIGN §11): verifies it first,
 * builds the library in a folder beside the target, and only then swaps the two (a marker file
 * lets the next run finish a swap a kill interrupted). A failure before the swap leaves the
 * target as it was. The target's lock is held throughout, so no server starts on it meanwhile.
 */
export async function restoreIntoDataDir(
  backupPath: string,
  dataDir: string,
  options: RestoreOptions = {},
): Promise<RestoreResult> {
  const { Store } = await import('../storage/embedded/store');
  const target = resolve(dataDir);
  await recoverInterruptedRestore(target);
  const { manifest, folder, dump } = await loadBackup(backupPath);

  const targetExists = await exists(target);
  const lock = targetExists ? await acquireDataDirLock(target) : undefined;
  const staging = `${target}.restore-${randomBytes(4).toString('hex')}`;
  try {
    if (targetExists && !options.force && (await holdsLibrary(target)))
      throw new RestoreTargetInUseError(
        `${target} already holds a library; nothing was changed. Give --force to replace it.`,
      );
    await mkdir(staging);
    await copyBlobsFrom(
      (sha256) => backupBlobPath(folder, sha256),
      join(staging, 'blobs'),
      blobsOf(dump),
    );
    const store = await Store.open({ dataDir: staging });
    try {
      await importEmbedded(store, dump);
    } finally {
      await store.close();
    }
    await syncDirectory(dirname(target));
    await options.pauseAt?.('staged');

    const plan: SwapPlan = {
      staging,
      old: `${target}.restore-old-${randomBytes(4).toString('hex')}`,
    };
    await writeFileDurably(swapMarker(target), [JSON.stringify(plan)]);
    await options.pauseAt?.('swap');
    if (targetExists) await rename(target, plan.old);
    await options.pauseAt?.('swapping');
    await rename(staging, target);
    await syncDirectory(dirname(target));
    await unlink(swapMarker(target));
    await rm(plan.old, { recursive: true, force: true });
  } catch (error) {
    await rm(staging, { recursive: true, force: true }).catch(() => {});
    throw error;
  } finally {
    await lock?.release();
  }
  return { manifest, libraryId: dump.library.libraryId };
}

/**
 * Whether a data directory holds a library: any database file or journal counts, even of an
 * empty one (a new desktop app's), so that only --force replaces it.
 */
async function holdsLibrary(dataDir: string): Promise<boolean> {
  const names = await readdir(dataDir).catch(() => [] as string[]);
  return names.some((name) => name === 'db.json' || /^journal-\d+\.ndjson$/.test(name));
}

/**
 * Restores a backup into a PostgreSQL database (DESIGN §11): verifies it first, copies its
 * files into the deployment's blob folder (write-once, named by content: harmless if the restore
 * stops there), then writes every record in one transaction, which is the swap.
 */
export async function restoreIntoDatabase(
  backupPath: string,
  pool: pg.Pool,
  blobRoot: string,
  options: RestoreOptions = {},
): Promise<RestoreResult> {
  const { manifest, folder, dump } = await loadBackup(backupPath);
  if (!options.force && (await postgresHoldsData(pool)))
    throw new RestoreTargetInUseError(
      'The database already holds a library; nothing was changed. Give --force to replace it.',
    );
  await copyBlobsFrom((sha256) => backupBlobPath(folder, sha256), blobRoot, blobsOf(dump));
  await options.pauseAt?.('swap');
  // The transaction is the swap: killed before its COMMIT, the database is as it was.
  await importPostgres(pool, dump, () => options.pauseAt?.('swapping') ?? Promise.resolve());
  return { manifest, libraryId: dump.library.libraryId };
}
