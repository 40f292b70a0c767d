import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
// Static: serve, sync and users import it too, so it is in the CLI's chunk anyway.
import { DataDirInUseError } from '../storage/embedded/data-dir-lock';
import type { Database } from '../storage/postgres/database';
import type { Store } from '../storage/embedded/store';
import type { DumpSummary, LibraryDump, SyncState } from '../storage/library-transfer';
import { CommandFailed, EXIT, UsageError, print, type Command, type CommandInput } from './command';
import { requireLibrary } from './library-dir';
import { writeFileDurably } from '../storage/durable-file';

/** A database URL, as `--database` takes it. */
const isUrl = (location: string) => /^postgres(ql)?:\/\//i.test(location);

/** One side of a move: an embedded data directory or a PostgreSQL database. */
type Side = { kind: 'dir'; path: string } | { kind: 'url'; url: string };

function sideOf(flag: string, value: string | undefined): Side {
  if (value === undefined || value === '') throw new UsageError(`missing --${flag}`);
  if (!isUrl(value)) {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value))
      throw new UsageError(
        `--${flag} must be a data directory or a postgres:// URL, not "${value}"`,
      );
    return { kind: 'dir', path: resolve(value) };
  }
  try {
    const url = new URL(value);
    if (url.hostname === '' && !url.searchParams.get('host')) throw new Error('no host');
  } catch {
    // Never echo the URL: it may hold a password.
    throw new UsageError(`--${flag} is not a valid postgres:// URL`);
  }
  return { kind: 'url', url: value };
}

/** An open side: read its library, write one into it, close it. */
interface OpenSide {
  label: string;
  /** The blob root: `<data-dir>/blobs`. */
  blobRoot: string;
  holdsData(): Promise<boolean>;
  read(): Promise<LibraryDump>;
  write(dump: LibraryDump): Promise<void>;
  /** A replica's sync state (its hub link); PostgreSQL holds none: it cannot be a replica. */
  readSync(): Promise<Replica>;
  /** Present only where a library can be a replica: a data directory. */
  writeSync?(replica: Replica): Promise<void>;
  close(): Promise<void>;
}

/**
 * The replica side of a library: its sync state and, headless, the key its device token is
 * sealed with (`<data-dir>/sync.key`, server/sync/secret-box.ts; the desktop app seals it with
 * the OS keychain instead, which does not move with the directory and need not).
 */
interface Replica {
  state: SyncState;
  key: Buffer | undefined;
}

const SYNC_KEY_FILE = 'sync.key';

async function openDir(path: string, role: 'source' | 'target'): Promise<OpenSide> {
  if (role === 'source') await requireLibrary(path, '--from');
  const [{ Store }, transfer] = await Promise.all([
    import('../storage/embedded/store'),
    import('../storage/library-transfer'),
  ]);
  let store: Store;
  try {
    // Under the data-directory lock: a server using it makes this fail, as it should.
    store = await Store.open({
      dataDir: path,
      log: {
        info: () => {},
        warn: (message) => process.stderr.write(`warning: ${message}\n`),
        error: (_detail, message) => process.stderr.write(`error: ${message}\n`),
      },
    });
  } catch (error) {
    if (error instanceof DataDirInUseError) throw new CommandFailed(error.message);
    throw error;
  }
  return {
    label: path,
    blobRoot: resolve(path, 'blobs'),
    holdsData: async () => transfer.embeddedHoldsData(store),
    read: async () => transfer.exportEmbedded(store),
    write: (dump) => transfer.importEmbedded(store, dump),
    readSync: async () => ({
      state: transfer.readSyncState(store),
      key: await readFile(join(path, SYNC_KEY_FILE)).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return undefined;
        throw error;
      }),
    }),
    writeSync: async ({ state, key }) => {
      // The key before the state that needs it; written as the blobs are (temp, fsync, rename), 0600.
      if (key) await writeFileDurably(join(path, SYNC_KEY_FILE), [key]);
      await transfer.writeSyncState(store, state);
    },
    close: () => store.close(),
  };
}

async function openUrl(url: string, dataDir: string | undefined): Promise<OpenSide> {
  if (dataDir === undefined)
    throw new UsageError(
      'give --data-dir: the directory of the PostgreSQL deployment\'s files (as "serve --database" uses it)',
    );
  const [{ openDatabase, DatabaseConnectError, DatabaseSchemaTooNewError }, transfer] =
    await Promise.all([
      import('../storage/postgres/database'),
      import('../storage/library-transfer'),
    ]);
  let database: Database;
  try {
    database = await openDatabase(url, { poolSize: 2 });
  } catch (error) {
    if (error instanceof DatabaseConnectError) throw new UnreachableDatabase(error.message);
    if (error instanceof DatabaseSchemaTooNewError) throw new CommandFailed(error.message);
    throw error;
  }
  const path = resolve(dataDir);
  return {
    label: `PostgreSQL at ${database.target} (files in ${path})`,
    blobRoot: resolve(path, 'blobs'),
    holdsData: () => transfer.postgresHoldsData(database.pool),
    read: () => transfer.exportPostgres(database.pool),
    write: (dump) => transfer.importPostgres(database.pool, dump),
    readSync: async () => ({ state: [], key: undefined }),
    close: () => database.close(),
  };
}

/** The database cannot be reached: one line, exit status 2, as `serve` does. */
class UnreachableDatabase extends Error {}

function summaryLines(summary: DumpSummary, blobs: number): string[] {
  const rows = Object.entries(summary).map(
    ([part, { count, sha256 }]) => `  ${part.padEnd(11)}${String(count).padStart(9)}  ${sha256}`,
  );
  return [
    `  ${'part'.padEnd(11)}${'count'.padStart(9)}  sha256 of the content`,
    ...rows,
    `  ${'blobs'.padEnd(11)}${String(blobs).padStart(9)}  each checked against its name`,
  ];
}

async function migrate(input: CommandInput): Promise<number> {
  const from = sideOf('from', input.option('from'));
  const to = sideOf('to', input.option('to'));
  if (from.kind === 'url' && to.kind === 'url')
    throw new UsageError(
      'one side must be a data directory: --from URL --to DIR, or --from DIR --to URL',
    );
  if (from.kind === 'dir' && to.kind === 'dir' && from.path === to.path)
    throw new UsageError('--from and --to are the same data directory');
  const dataDir = input.option('data-dir');
  const transfer = await import('../storage/library-transfer');

  const opened: OpenSide[] = [];
  try {
    const source =
      from.kind === 'dir' ? await openDir(from.path, 'source') : await openUrl(from.url, dataDir);
    opened.push(source);
    // A replica's hub link goes only where a library can sync: refused before the target is
    // touched, so nothing is half moved and the link is never dropped without a word.
    const replica = await source.readSync();
    const link = transfer.syncLinkOf(replica.state);
    if (link && to.kind === 'url')
      throw new CommandFailed(
        `${source.label} syncs with the team server ${link.hubUrl} (as ${link.username}), and a ` +
          'library in PostgreSQL cannot sync with a team server; nothing was changed. Move it to ' +
          'another data directory (--to DIR) to keep it syncing, or, to move it as a library of ' +
          'its own, let it sync, forget the hub (Settings → Team server) and run this again.',
      );
    const target =
      to.kind === 'dir' ? await openDir(to.path, 'target') : await openUrl(to.url, dataDir);
    opened.push(target);

    if ((await target.holdsData()) && !input.flag('force'))
      throw new CommandFailed(
        `${target.label} already holds a library; nothing was changed. Give --force to replace it.`,
      );
    const dump = await source.read();
    const expected = transfer.summarize(dump);
    const blobs = transfer.blobsOf(dump);
    print(`Moving the library ${dump.library.libraryId} (seq ${dump.library.seq})`);
    print(`  from ${source.label}`);
    print(`  to   ${target.label}`);

    // Blobs first: they are write-once, so a copy that stops half-way leaves only files that a
    // later run finds in place; the records come after, all at once.
    if (source.blobRoot === target.blobRoot) await transfer.verifyBlobs(source.blobRoot, blobs);
    else await transfer.copyBlobs(source.blobRoot, target.blobRoot, blobs);
    await target.write(dump);
    // Also when the source has none: a replaced target keeps no link to a hub of its own.
    await target.writeSync?.(replica);

    // Read back from the target and compared part by part with what was read from the source.
    const actual = transfer.summarize(await target.read());
    await transfer.verifyBlobs(target.blobRoot, blobs);
    const differing = Object.keys(expected).filter(
      (part) =>
        JSON.stringify(expected[part as keyof DumpSummary]) !==
        JSON.stringify(actual[part as keyof DumpSummary]),
    );
    print('Verified at the target (counts and content hashes equal to the source):');
    for (const line of summaryLines(actual, blobs.length)) print(line);
    if (target.writeSync) {
      const sent = transfer.summarizeSync(replica.state);
      const { count, sha256 } = transfer.summarizeSync((await target.readSync()).state);
      print(`  ${'sync'.padEnd(11)}${String(count).padStart(9)}  ${sha256}`);
      if (sha256 !== sent.sha256) differing.push('sync');
      print(
        link
          ? `The link to the team server ${link.hubUrl} (as ${link.username}) was carried: it goes on syncing.`
          : 'The library was linked to no team server.',
      );
    }
    if (differing.length > 0)
      throw new CommandFailed(`the copy differs from the source in: ${differing.join(', ')}`);
    print('Done. Sessions were not moved: everyone signs in again.');
    return EXIT.ok;
  } catch (error) {
    if (error instanceof transfer.BlobCopyError) throw new CommandFailed(error.message);
    if (error instanceof UnreachableDatabase) {
      console.error(`error: ${error.message}`);
      return EXIT.usage;
    }
    throw error;
  } finally {
    for (const side of opened.reverse()) await side.close();
  }
}

export const storageMigrateCommand: Command = {
  name: 'storage migrate',
  summary: 'Move a deployment between data directories and PostgreSQL, without loss.',
  flags: [
    {
      name: 'from',
      value: '<dir|url>',
      description: 'where the library is: a data directory or a postgres:// URL',
    },
    {
      name: 'to',
      value: '<dir|url>',
      description: 'where it goes: a data directory or a postgres:// URL (not two URLs)',
    },
    {
      name: 'data-dir',
      value: '<path>',
      env: 'PORTFOLIO_DATA_DIR',
      description: 'the PostgreSQL side\'s files (its "serve --database … --data-dir")',
    },
    {
      name: 'force',
      description: 'replace a target that already holds a library (its data is deleted)',
    },
  ],
  notes:
    'Works only on deployments no server is using: stop every server first (a data directory\n' +
    'is locked while this runs). Moves portfolios with their revision, seq and authors, every\n' +
    'kept revision, the trash, the tombstones and feed horizon, the users with their password\n' +
    'hashes, the library id (so replicas go on syncing) and the files (each checked against its\n' +
    'SHA-256). The target is then read back and compared with the source by counts and content\n' +
    'hashes, which are printed. Sessions are not moved.\n' +
    'A replica (a library that syncs with a team server) keeps its link, checkpoint and device\n' +
    'token when moved to another data directory; PostgreSQL cannot sync with a team server, so\n' +
    'moving a replica there is refused, nothing changed: forget the hub first to move it anyway.\n' +
    'Example: portfolio storage migrate --from /srv/portfolio/data \\\n' +
    '           --to postgres://portfolio@db/portfolio --data-dir /srv/portfolio/files',
  run: migrate,
};
