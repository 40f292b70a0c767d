import { join, resolve } from 'node:path';
import packageJson from '../../package.json' with { type: 'json' };
import type { BackupStep } from '../backup/write-backup';
import type { RestoreStep } from '../backup/restore';
import type { LibraryDump } from '../storage/library-transfer';
import { defaultBackupTarget } from '../config';
import {
  CommandFailed,
  DATA_DIR_FLAG,
  EXIT,
  UsageError,
  print,
  type Command,
  type CommandInput,
  type Flag,
} from './command';
import { holdsDatabase } from './library-dir';
import { DataDirInUseError } from '../storage/embedded/data-dir-lock';

const DATABASE_FLAG: Flag = {
  name: 'database',
  value: '<url>',
  env: 'PORTFOLIO_DATABASE_URL',
  description: 'PostgreSQL, as "serve --database" takes it (--data-dir then holds its files)',
};

const TO_FLAG: Flag = {
  name: 'to',
  value: '<folder>',
  env: 'PORTFOLIO_BACKUP_DIR',
  description: 'the backup folder (default: backups/ beside the data directory)',
};

const dataDirOf = (input: CommandInput) => resolve(input.option('data-dir') ?? 'data');
const targetOf = (input: CommandInput) =>
  resolve(input.option('to') || defaultBackupTarget(dataDirOf(input)));

function databaseOf(input: CommandInput): string | undefined {
  const url = input.option('database') || undefined;
  // Never echo the URL: it may hold a password.
  if (url !== undefined && (!/^postgres(ql)?:\/\//i.test(url) || !URL.canParse(url)))
    throw new UsageError('--database must be a postgres:// URL');
  return url;
}

/**
 * Test seam: PORTFOLIO_TEST_STALL_AT names a step at which the command says "stalled at <step>"
 * and waits, so a test can kill it there (kill -9 at a seeded point).
 */
function stallAt<T extends string>(env: NodeJS.ProcessEnv) {
  const step = env.PORTFOLIO_TEST_STALL_AT;
  if (!step) return undefined;
  return async (at: T) => {
    if (at !== step) return;
    print(`stalled at ${at}`);
    await new Promise(() => {});
  };
}

const quietLog = {
  info: () => {},
  warn: (message: string) => process.stderr.write(`warning: ${message}\n`),
  error: (_detail: unknown, message: string) => process.stderr.write(`error: ${message}\n`),
};

/**
 * Opens a PostgreSQL database, or fails in one line. A backup reads only one the application
 * set up (`mustExist`); a restore may set up a new, empty one.
 */
async function openPostgres(url: string, mustExist: boolean) {
  const database = await import('../storage/postgres/database');
  try {
    return await database.openDatabase(url, { poolSize: 2, mustExist });
  } catch (error) {
    if (
      error instanceof database.DatabaseNotSetUpError ||
      error instanceof database.DatabaseConnectError ||
      error instanceof database.DatabaseSchemaTooNewError
    )
      throw new CommandFailed(error.message);
    throw error;
  }
}

/** The library to back up, read at one point, and where its blobs are. */
async function readLibrary(input: CommandInput): Promise<{ dump: LibraryDump; blobRoot: string }> {
  const dataDir = dataDirOf(input);
  const blobRoot = join(dataDir, 'blobs');
  const url = databaseOf(input);
  const transfer = await import('../storage/library-transfer');
  if (url !== undefined) {
    // PostgreSQL is shared by running servers: read in one REPEATABLE READ transaction.
    const database = await openPostgres(url, true);
    try {
      return { dump: await transfer.exportPostgres(database.pool), blobRoot };
    } finally {
      await database.close();
    }
  }
  if (!(await holdsDatabase(dataDir)))
    throw new CommandFailed(`${dataDir} holds no Portfolio Manager data; check --data-dir.`);
  const { Store } = await import('../storage/embedded/store');
  let store;
  try {
    store = await Store.open({ dataDir, log: quietLog });
  } catch (error) {
    if (error instanceof DataDirInUseError)
      throw new CommandFailed(
        `A server is using ${dataDir}: back it up from there (Settings → Backups, or POST /api/v1/backups).`,
      );
    throw error;
  }
  try {
    return { dump: transfer.exportEmbedded(store), blobRoot };
  } finally {
    await store.close();
  }
}

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

async function create(input: CommandInput): Promise<number> {
  const target = targetOf(input);
  const keep = keepOf(input.option('keep'));
  const [{ writeBackup, BackupWriteError }, { pruneBackups }, { blobPath }] = await Promise.all([
    import('../backup/write-backup'),
    import('../backup/read-backup'),
    import('../storage/library-transfer'),
  ]);
  const { dump, blobRoot } = await readLibrary(input);
  print(`Backing up the library ${dump.library.libraryId} (seq ${dump.library.seq}) to ${target}`);
  let written;
  try {
    written = await writeBackup({
      target,
      dump,
      blobPath: (sha256) => blobPath(blobRoot, sha256),
      productVersion: packageJson.version,
      pauseAt: stallAt<BackupStep>(input.env),
    });
  } catch (error) {
    if (error instanceof BackupWriteError) throw new CommandFailed(error.message);
    throw error;
  }
  const { manifest } = written;
  print(`Backup ${written.backupId} is complete: ${written.path}`);
  print(
    `  ${manifest.counts.portfolios} portfolios, ${manifest.counts.revisions} revisions, ` +
      `${manifest.counts.trash} in the trash, ${manifest.counts.files} files, ${megabytes(manifest.sizeBytes)}`,
  );
  const pruned = await pruneBackups(target, keep);
  if (pruned.removed.length > 0)
    print(`Removed ${pruned.removed.length} older backup(s), keeping the newest ${keep}.`);
  return EXIT.ok;
}

function keepOf(value: string | undefined): number {
  if (value === undefined || value === '') return 7;
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new UsageError(`--keep must be a whole number of backups, 1 or more, not "${value}"`);
  return Number(value);
}

async function list(input: CommandInput): Promise<number> {
  const target = targetOf(input);
  const { listBackups } = await import('../backup/read-backup');
  const backups = await listBackups(target);
  if (input.flag('json')) {
    print(JSON.stringify(backups, null, 2));
    return EXIT.ok;
  }
  if (backups.length === 0) {
    print(`No backups in ${target}.`);
    return EXIT.ok;
  }
  print(`Backups in ${target}, newest first:`);
  for (const backup of backups)
    print(
      `  ${backup.backupId}  ${new Date(backup.createdTime).toISOString()}  seq ${backup.seq}  ` +
        `${backup.counts.portfolios} portfolios  ${megabytes(backup.sizeBytes)}`,
    );
  return EXIT.ok;
}

async function verify(input: CommandInput): Promise<number> {
  const { verifyBackup } = await import('../backup/read-backup');
  const { BackupInvalidError } = await import('../backup/manifest');
  try {
    const { folder, manifest } = await verifyBackup(input.positionals[0]!);
    print(
      `The backup ${folder} is whole: ${Object.keys(manifest.files).length} files checked ` +
        `(${manifest.counts.portfolios} portfolios at seq ${manifest.seq}).`,
    );
    return EXIT.ok;
  } catch (error) {
    if (error instanceof BackupInvalidError) throw new CommandFailed(error.message);
    throw error;
  }
}

async function restore(input: CommandInput): Promise<number> {
  const source = input.positionals[0]!;
  const url = databaseOf(input);
  const force = input.flag('force');
  const [restoring, { BackupInvalidError }, { BlobCopyError }] = await Promise.all([
    import('../backup/restore'),
    import('../backup/manifest'),
    import('../storage/library-transfer'),
  ]);
  const pauseAt = stallAt<RestoreStep>(input.env);
  try {
    let result;
    if (url !== undefined) {
      const database = await openPostgres(url, false);
      try {
        result = await restoring.restoreIntoDatabase(
          source,
          database.pool,
          join(dataDirOf(input), 'blobs'),
          { force, pauseAt },
        );
      } finally {
        await database.close();
      }
    } else {
      result = await restoring.restoreIntoDataDir(source, dataDirOf(input), { force, pauseAt });
    }
    const { manifest } = result;
    print(
      `Restored ${manifest.counts.portfolios} portfolios (seq ${manifest.seq}) into ` +
        `${url === undefined ? dataDirOf(input) : 'the database'}.`,
    );
    print(
      `The library has a new id, ${result.libraryId}: replicas that sync with it start a full ` +
        'pull, and push what it lacks. Sessions were not restored: everyone signs in again.',
    );
    return EXIT.ok;
  } catch (error) {
    if (
      error instanceof BackupInvalidError ||
      error instanceof restoring.RestoreTargetInUseError ||
      error instanceof DataDirInUseError ||
      error instanceof BlobCopyError
    )
      throw new CommandFailed(error.message);
    throw error;
  }
}

export const backupCreateCommand: Command = {
  name: 'backup create',
  summary: 'Back up a library (stopped data directory, or PostgreSQL) into a backup folder.',
  flags: [
    DATA_DIR_FLAG,
    DATABASE_FLAG,
    TO_FLAG,
    {
      name: 'keep',
      value: '<n>',
      env: 'PORTFOLIO_BACKUP_KEEP',
      description: 'backups kept in the folder; older ones are removed (default 7)',
    },
  ],
  notes:
    'With --data-dir only: the data directory must not be in use; back up a running server from\n' +
    'Settings → Backups or POST /api/v1/backups. With --database: works while servers run.\n' +
    'Each backup is a folder <backup-id>/ with manifest.json; files are kept once in blobs/,\n' +
    'shared by every backup in the folder, so a backup copies only files that are new.',
  run: create,
};

export const backupListCommand: Command = {
  name: 'backup list',
  summary: 'List the whole backups in a backup folder, newest first.',
  flags: [
    DATA_DIR_FLAG,
    TO_FLAG,
    { name: 'json', description: 'print a JSON array instead of a table' },
  ],
  run: list,
};

export const backupVerifyCommand: Command = {
  name: 'backup verify',
  args: '<path>',
  summary: 'Re-hash every file of a backup against its manifest (PATH: its folder or manifest).',
  flags: [],
  run: verify,
};

export const backupRestoreCommand: Command = {
  name: 'backup restore',
  args: '<path>',
  summary: 'Restore a backup into a stopped data directory or an empty PostgreSQL database.',
  flags: [
    DATA_DIR_FLAG,
    DATABASE_FLAG,
    { name: 'force', description: 'replace a target that already holds a library' },
  ],
  notes:
    'Verifies the backup first, builds the library beside the target and swaps only at the end:\n' +
    'a failure or a kill leaves the target as it was. The restored library gets a new id.',
  run: restore,
};
