/**
 * Opening a PostgreSQL database: migrations once per deploy under a lock, a newer schema
 * refused, and an unusable database reported in one line naming where.
 */
import { createServer, type Server } from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DatabaseConnectError,
  DatabaseNotSetUpError,
  DatabaseSchemaTooNewError,
  openDatabase,
  targetOf,
  type Database,
} from '../../../server/storage/postgres/database';
import { SCHEMA_VERSION } from '../../../server/storage/postgres/migrations';
import {
  createTestDatabase,
  databaseUrl,
  postgresUnavailable,
  type TestDatabase,
} from '../../helpers/postgres';

const SUITE = 'PostgreSQL database: connect and migrate';
const unavailable = await postgresUnavailable(SUITE);

describe('targetOf', () => {
  it('names host and port, never the password', () => {
    expect(targetOf('postgres://ann:secret@db.example:6543/portfolio')).toBe('db.example:6543');
    expect(targetOf('postgresql://db.example/portfolio')).toBe('db.example:5432');
    expect(targetOf('postgres://[::1]:5433/portfolio')).toBe('[::1]:5433');
    expect(targetOf('postgres:///portfolio?host=/run/postgresql')).toBe('/run/postgresql:5432');
  });
});

describe('an unreachable database', () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  /** A port nothing listens on: taken from the system, then released. */
  async function closedPort(): Promise<number> {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as { port: number };
    await new Promise((resolve) => probe.close(resolve));
    return port;
  }

  it('is one line naming host and port and why', async () => {
    const port = await closedPort();
    const opening = openDatabase(`postgres://ann:secret@127.0.0.1:${port}/portfolio`);
    await expect(opening).rejects.toBeInstanceOf(DatabaseConnectError);
    const error = (await opening.catch((caught: unknown) => caught)) as Error;
    expect(error.message).toBe(
      `Cannot connect to PostgreSQL at 127.0.0.1:${port}: connection refused (is PostgreSQL running and listening there?).`,
    );
    expect(error.message).not.toContain('secret');
  });

  it('gives up after the connect timeout on a server that never answers', async () => {
    server = createServer(() => {}); // accepts, then says nothing
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const opening = openDatabase(`postgres://127.0.0.1:${port}/portfolio`, {
      connectTimeoutMs: 300,
    });
    await expect(opening).rejects.toThrow(
      `Cannot connect to PostgreSQL at 127.0.0.1:${port}: no answer (timed out).`,
    );
  });
});

describe.skipIf(unavailable)(SUITE, () => {
  const opened: Database[] = [];
  let testDatabase: TestDatabase | undefined;
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((database) => database.close()));
    await testDatabase?.drop();
    testDatabase = undefined;
  });

  async function open(url: string): Promise<Database> {
    const database = await openDatabase(url);
    opened.push(database);
    return database;
  }

  it('migrates a new database once, even when several instances start together', async () => {
    testDatabase = await createTestDatabase();
    const lines: string[] = [];
    const logger = { info: (line: string) => lines.push(line), warn: () => {} };
    const databases = await Promise.all(
      Array.from({ length: 4 }, () => openDatabase(testDatabase!.url, { logger })),
    );
    opened.push(...databases);
    const { rows } = await databases[0]!.pool.query('SELECT name FROM schema_migrations');
    const names = [
      '0001_initial',
      '0002_search',
      '0003_devices',
      '0004_conflicts_index',
      '0005_list_indexes',
      '0006_project_title',
      '0007_pick_in_order_indexes',
      '0008_tombstone_mutations',
      '0009_facets',
    ];
    expect(rows.map((row: { name: string }) => row.name)).toEqual(names);
    // Each migration ran once, though four instances started together.
    for (const name of names)
      expect(lines.filter((line) => line.includes(`MIGRATION ${name}`))).toHaveLength(1);
    const library = await databases[0]!.pool.query('SELECT library_id, seq FROM library');
    expect(library.rows).toEqual([
      { library_id: expect.stringMatching(/^[0-9a-f-]{36}$/), seq: 0 },
    ]);
  });

  it('a connection cut while a query is in flight fails that query, never the process', async () => {
    // Without a listener of its own, a checked-out connection's 'error' is an uncaught exception
    // that ends the server (Vitest fails the run on it).
    testDatabase = await createTestDatabase();
    const database = await open(testDatabase.url);
    const client = await database.pool.connect();
    const sleeping = client.query('SELECT pg_sleep(5)');
    const cut = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    (
      client as unknown as { connection: { stream: { destroy(error: Error): void } } }
    ).connection.stream.destroy(cut);
    await expect(sleeping).rejects.toThrow(/ECONNRESET/);
    client.release(true);
    const { rows } = await database.pool.query('SELECT 1 AS one');
    expect(rows).toEqual([{ one: 1 }]);
  });

  it('opens a database it migrated before without changing it', async () => {
    testDatabase = await createTestDatabase();
    const first = await open(testDatabase.url);
    const { rows: before } = await first.pool.query('SELECT * FROM schema_migrations');
    const { rows: library } = await first.pool.query('SELECT library_id FROM library');
    const second = await open(testDatabase.url);
    expect((await second.pool.query('SELECT * FROM schema_migrations')).rows).toEqual(before);
    expect((await second.pool.query('SELECT library_id FROM library')).rows).toEqual(library);
  });

  it('refuses a database of a newer schema version, saying which version it needs', async () => {
    testDatabase = await createTestDatabase();
    const database = await open(testDatabase.url);
    const newer = SCHEMA_VERSION + 1;
    await database.pool.query(`INSERT INTO schema_migrations (name, run_on) VALUES ($1, now())`, [
      `${String(newer).padStart(4, '0')}_from_the_future`,
    ]);
    const opening = openDatabase(testDatabase.url);
    await expect(opening).rejects.toBeInstanceOf(DatabaseSchemaTooNewError);
    await expect(opening).rejects.toThrow(
      `has schema version ${newer}; this Portfolio Manager reads up to version ${SCHEMA_VERSION}`,
    );
  });

  it('with mustExist, refuses a database never set up and leaves it empty', async () => {
    testDatabase = await createTestDatabase();
    const opening = openDatabase(testDatabase.url, { mustExist: true });
    await expect(opening).rejects.toBeInstanceOf(DatabaseNotSetUpError);
    await expect(opening).rejects.toThrow(
      `no Portfolio Manager database at ${new URL(testDatabase.url).host}/${testDatabase.name} ` +
        '(it was never set up; nothing was created).',
    );
    const admin = new pg.Client({ connectionString: testDatabase.url });
    await admin.connect();
    const { rows } = await admin.query(
      "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'",
    );
    await admin.end();
    expect(rows).toEqual([{ n: 0 }]);

    // Once a server has set it up, it opens.
    await open(testDatabase.url);
    const again = await openDatabase(testDatabase.url, { mustExist: true });
    opened.push(again);
    expect((await again.pool.query('SELECT count(*)::int AS n FROM users')).rows).toEqual([
      { n: 0 },
    ]);
  });

  it('reports a database that does not exist in one line', async () => {
    const url = databaseUrl('pm_test_never_created');
    const opening = openDatabase(url);
    await expect(opening).rejects.toBeInstanceOf(DatabaseConnectError);
    await expect(opening).rejects.toThrow(
      `Cannot connect to PostgreSQL at ${new URL(url).host}: database "pm_test_never_created" does not exist.`,
    );
  });

  it('keeps serving after the server drops an idle connection', async () => {
    testDatabase = await createTestDatabase();
    const warnings: string[] = [];
    const database = await openDatabase(testDatabase.url, {
      logger: { info: () => {}, warn: (line) => warnings.push(line) },
    });
    opened.push(database);
    await database.pool.query('SELECT 1'); // leaves one idle connection in the pool
    const admin = new pg.Client({ connectionString: testDatabase.url });
    await admin.connect();
    await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    );
    await admin.end();
    await expect.poll(() => warnings.length).toBeGreaterThan(0);
    expect(warnings[0]).toMatch(/^PostgreSQL connection lost: /);
    expect((await database.pool.query('SELECT 2 AS two')).rows).toEqual([{ two: 2 }]);
  });
});
