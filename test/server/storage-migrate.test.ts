/**
 * `portfolio storage migrate` (DESIGN §12): a real data directory, made by the real server with
 * real images, moved to PostgreSQL and back into a new data directory by the real command line;
 * every portfolio, revision, trash entry, tombstone, user and blob compared on the way.
 */
import { createHash } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../server/storage/postgres/database';
import {
  blobPath,
  blobsOf,
  exportEmbedded,
  exportPostgres,
  summarize,
  type LibraryDump,
} from '../../server/storage/library-transfer';
import { Store } from '../../server/storage/embedded/store';
import { killRunningClis, spawnCli } from '../helpers/cli-process';
import { download, fixtures, uploadMultipart } from '../helpers/file-fixtures';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../helpers/postgres';
import { makeTempDir, portfolioBody, startTestServer } from '../helpers/test-server';

const SUITE = 'portfolio storage migrate';
const unavailable = await postgresUnavailable(SUITE);

async function run(args: string[]) {
  const cli = spawnCli(['storage', 'migrate', ...args]);
  const { code } = await cli.exited;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

async function embeddedDump(dataDir: string): Promise<LibraryDump> {
  const store = await Store.open({ dataDir });
  try {
    return exportEmbedded(store);
  } finally {
    await store.close();
  }
}

async function postgresDump(url: string): Promise<LibraryDump> {
  const database = await openDatabase(url);
  try {
    return await exportPostgres(database.pool);
  } finally {
    await database.close();
  }
}

/** The dump with each part in a fixed order, for comparing whole. */
function sorted(dump: LibraryDump): LibraryDump {
  const by = <T>(items: T[], key: (item: T) => string) =>
    [...items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  return {
    library: dump.library,
    portfolios: by(dump.portfolios, (item) => item.portfolioId),
    revisions: by(dump.revisions, (item) => `${item.portfolioId}\u0000${item.revision}`),
    trash: by(dump.trash, (item) => item.portfolioId),
    tombstones: by(dump.tombstones, (item) => item.portfolioId),
    users: by(dump.users, (item) => item.username),
  };
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe.skipIf(unavailable)(SUITE, () => {
  const dirs: string[] = [];
  let testDatabase: TestDatabase;
  let sourceDir: string;
  let pgFiles: string;
  let source: LibraryDump;
  let coverBytes: Buffer;
  let coverPath: string;

  beforeAll(async () => {
    // The embedded store, whatever backend the run's test servers use: it is the source here.
    const server = await startTestServer({ database: null });
    sourceDir = server.dataDir;
    dirs.push(sourceDir);
    await server.userSession('editor1', 'editor', ['Interior']);
    const create = async (portfolioId: string, projectTitle: string) => {
      const response = await server.request('POST', '/api/v1/portfolio', {
        body: portfolioBody({ portfolioId, projectTitle }),
      });
      expect(response.status).toBe(201);
    };
    // p-live: two covers, so a kept revision holds a blob the live record no longer does.
    await create('p-live', 'Café au lait');
    expect(
      (await uploadMultipart(server, '/api/v1/portfolio/p-live/cover', await fixtures.jpeg()))
        .status,
    ).toBe(200);
    coverBytes = await fixtures.png();
    const cover = await uploadMultipart(server, '/api/v1/portfolio/p-live/cover', coverBytes, {
      filename: 'cover.png',
    });
    expect(cover.status).toBe(200);
    coverPath = `/api/v1/portfolio/p-live/files/${cover.body.fileId}`;
    // p-trash: in the trash with its file; p-gone: purged, a tombstone.
    await create('p-trash', 'Lake house');
    await uploadMultipart(server, '/api/v1/portfolio/p-trash/cover', await fixtures.webp());
    expect((await server.request('DELETE', '/api/v1/portfolio/p-trash')).status).toBe(204);
    await create('p-gone', 'Gone');
    expect((await server.request('DELETE', '/api/v1/portfolio/p-gone')).status).toBe(204);
    expect((await server.request('DELETE', '/api/v1/trash/p-gone')).status).toBe(204);
    await server.stop();

    source = await embeddedDump(sourceDir);
    testDatabase = await createTestDatabase();
    pgFiles = await makeTempDir('portfolio-pg-files-');
    dirs.push(pgFiles);
  });

  afterAll(async () => {
    await killRunningClis();
    await testDatabase?.drop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('made a library with every kind of record to move', () => {
    expect(source.portfolios.map((item) => item.portfolioId)).toEqual(['p-live']);
    expect(source.revisions.length).toBeGreaterThanOrEqual(5);
    expect(source.trash.map((item) => item.portfolioId)).toEqual(['p-trash']);
    expect(source.tombstones.map((item) => item.portfolioId)).toEqual(['p-gone']);
    expect(source.users.map((user) => user.username).sort()).toEqual(['admin', 'editor1']);
    expect(blobsOf(source)).toHaveLength(3);
  });

  it('moves a data directory to PostgreSQL without loss, printing counts and hashes', async () => {
    const moved = await run(['--from', sourceDir, '--to', testDatabase.url, '--data-dir', pgFiles]);
    expect(moved.stderr).toBe('');
    expect(moved.code).toBe(0);
    const expected = summarize(source);
    for (const [part, { count, sha256: hash }] of Object.entries(expected))
      expect(moved.stdout).toMatch(new RegExp(`${part} +${count} +${hash}`));
    expect(moved.stdout).toMatch(/blobs +3 /);

    const copied = await postgresDump(testDatabase.url);
    expect(sorted(copied)).toEqual(sorted(source));
    expect(copied.library.libraryId).toBe(source.library.libraryId);
    for (const blob of blobsOf(source)) {
      const bytes = await readFile(blobPath(join(pgFiles, 'blobs'), blob));
      expect(sha256(bytes)).toBe(blob);
      expect(bytes.equals(await readFile(blobPath(join(sourceDir, 'blobs'), blob)))).toBe(true);
    }
  });

  it('refuses a target that already holds a library, changing nothing, unless --force', async () => {
    const again = await run(['--from', sourceDir, '--to', testDatabase.url, '--data-dir', pgFiles]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already holds a library; nothing was changed\. Give --force/);
    expect(again.stderr.trim().split('\n')).toHaveLength(1);
    expect(sorted(await postgresDump(testDatabase.url))).toEqual(sorted(source));

    const forced = await run([
      ...['--from', sourceDir, '--to', testDatabase.url, '--data-dir', pgFiles, '--force'],
    ]);
    expect(forced.code).toBe(0);
    expect(sorted(await postgresDump(testDatabase.url))).toEqual(sorted(source));
  });

  it('moves it back into a new data directory that a server then serves as before', async () => {
    const backDir = await makeTempDir('portfolio-back-');
    dirs.push(backDir);
    const moved = await run(['--from', testDatabase.url, '--to', backDir, '--data-dir', pgFiles]);
    expect(moved.stderr).toBe('');
    expect(moved.code).toBe(0);
    expect(sorted(await embeddedDump(backDir))).toEqual(sorted(source));
    for (const blob of blobsOf(source))
      expect(sha256(await readFile(blobPath(join(backDir, 'blobs'), blob)))).toBe(blob);

    // The moved users sign in with their own passwords; the files and the trash are there.
    const server = await startTestServer({ dataDir: backDir, database: null });
    try {
      await server.signIn('editor1', 'editor1-password');
      const file = await download(server, coverPath);
      expect(file.status).toBe(200);
      expect(file.bytes.equals(coverBytes)).toBe(true);
      const trash = await server.request('GET', '/api/v1/trash');
      expect(trash.body.lists.map((entry: { portfolioId: string }) => entry.portfolioId)).toEqual([
        'p-trash',
      ]);
      const feed = await server.request('GET', '/api/v1/changes?since=0');
      expect(feed.body.libraryId).toBe(source.library.libraryId);
    } finally {
      await server.stop();
    }

    // And a non-empty data directory is refused like a non-empty database.
    const refused = await run(['--from', testDatabase.url, '--to', backDir, '--data-dir', pgFiles]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/already holds a library/);
  });

  it('stops at a damaged blob before writing any record', async () => {
    const damagedDir = await makeTempDir('portfolio-damaged-');
    dirs.push(damagedDir);
    const target = await createTestDatabase();
    try {
      const damaged = await run([
        '--from',
        testDatabase.url,
        '--to',
        damagedDir,
        '--data-dir',
        pgFiles,
      ]);
      expect(damaged.code).toBe(0);
      const blob = blobsOf(source)[0]!;
      await import('node:fs/promises').then(({ writeFile }) =>
        writeFile(blobPath(join(damagedDir, 'blobs'), blob), 'not the bytes'),
      );
      const files = await makeTempDir('portfolio-pg-files-');
      dirs.push(files);
      const refused = await run(['--from', damagedDir, '--to', target.url, '--data-dir', files]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(new RegExp(`error: The blob .*${blob.slice(2)} is damaged`));
      const database = await openDatabase(target.url);
      try {
        const { rows } = await database.pool.query('SELECT count(*) AS n FROM portfolios');
        expect(rows[0].n).toBe(0);
      } finally {
        await database.close();
      }
    } finally {
      await target.drop();
    }
  });

  it.each([
    [['--from', '/tmp/x', '--to', 'postgres://'], /--to is not a valid postgres:\/\/ URL/],
    [['--from', '/tmp/x', '--to', '/tmp/x/'], /--from and --to are the same data directory/],
    [['--from', 'postgres://h/a', '--to', 'postgres://h/b'], /one side must be a data directory/],
    [['--from', '/tmp/x', '--to', 'mysql://h/db'], /--to must be a data directory or a postgres/],
    [['--to', 'postgres://h/db'], /missing --from/],
  ])('refuses a bad command line %j with exit 2 and one line', async (args, message) => {
    const result = await run([...args, '--data-dir', '/tmp/files']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('names host and port of an unreachable database in one line, exit 2', async () => {
    const result = await run([
      ...[
        '--from',
        sourceDir,
        '--to',
        'postgres://postgres@127.0.0.1:1/none',
        '--data-dir',
        pgFiles,
      ],
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toMatch(
      /^error: Cannot connect to PostgreSQL at 127\.0\.0\.1:1: /,
    );
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });
});
