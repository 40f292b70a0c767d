import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, it } from 'vitest';
import { buildApp, type AppOptions } from '../../server/app';
import { OpenApiAnswers } from './openapi-answers';
import pg from 'pg';
import { openDatabase } from '../../server/storage/postgres/database';
import { EmbeddedBackend } from '../../server/storage/embedded/embedded-backend';
import type { Store } from '../../server/storage/embedded/store';
import { createTestDatabase, type TestDatabase } from './postgres';

/**
 * The backend HTTP tests run on: `postgres` (PORTFOLIO_TEST_BACKEND=postgres, the second test
 * run) gives every test server a database of its own, dropped when it closes.
 */
export const TEST_BACKEND: 'embedded' | 'postgres' =
  process.env.PORTFOLIO_TEST_BACKEND === 'postgres' ? 'postgres' : 'embedded';

/**
 * `it` for a test of the embedded store itself (its journal, files or lock): on the PostgreSQL
 * run the test is skipped, its name saying why.
 */
export function embeddedOnly(reason: string): typeof it {
  if (TEST_BACKEND !== 'postgres') return it;
  return ((name: string, ...rest: unknown[]) =>
    (it.skip as (...args: unknown[]) => void)(
      `${name} [embedded store only: ${reason}]`,
      ...rest,
    )) as unknown as typeof it;
}

/** `describe` for a suite of the embedded store itself; see embeddedOnly. */
export function describeEmbeddedOnly(reason: string): typeof describe {
  if (TEST_BACKEND !== 'postgres') return describe;
  return ((name: string, ...rest: unknown[]) =>
    (describe.skip as (...args: unknown[]) => void)(
      `${name} [embedded store only: ${reason}]`,
      ...rest,
    )) as unknown as typeof describe;
}

/**
 * The database of each data directory on the PostgreSQL run: a server started again on the same
 * directory (a restart) finds its data again. Dropped by `close()`, or when the test file ends.
 */
const databases = new Map<string, TestDatabase>();
/** Databases of closed servers, emptied for the next server; dropped at the end of the file. */
const closedDatabases: TestDatabase[] = [];
/** A migrated database each test server's database is copied from: one migration per file. */
let template: Promise<TestDatabase> | undefined;
/** Whether a test file drops them at its end; false in a child process a test started. */
let droppedAtEnd = false;
if (TEST_BACKEND === 'postgres') {
  try {
    afterAll(async () => {
      const left = [...databases.values(), ...closedDatabases];
      databases.clear();
      closedDatabases.length = 0;
      if (template) left.push(await template);
      template = undefined;
      for (const database of left) await database.drop().catch(() => {});
    });
    droppedAtEnd = true;
  } catch {
    // Imported outside a test file: a child process a test runs (and may kill -9) stays on the
    // embedded store, so no database of it is left behind.
  }
}

/** Empties a closed server's database (as a new deployment's) for the next one. */
async function reset(database: TestDatabase): Promise<void> {
  const client = new pg.Client(database.url);
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      `SELECT quote_ident(tablename) AS name FROM pg_tables
       WHERE schemaname = 'public' AND tablename NOT IN ('schema_migrations', 'library')`,
    );
    await client.query(`TRUNCATE ${rows.map((row) => row.name).join(', ')}`);
    await client.query(
      'UPDATE library SET library_id = gen_random_uuid()::text, seq = 0, horizon = 0',
    );
  } finally {
    await client.end();
  }
}

/** A fresh, migrated database of its own for one test server. */
async function testServerDatabase(): Promise<TestDatabase> {
  const spare = closedDatabases.pop();
  if (spare) {
    try {
      await reset(spare);
      return spare;
    } catch {
      closedDatabases.push(spare); // dropped at the end; make a new one
    }
  }
  template ??= (async () => {
    const made = await createTestDatabase();
    await (await openDatabase(made.url)).close();
    return made;
  })();
  const database = await createTestDatabase((await template).name);
  // A library of its own, as a new deployment would have.
  const client = new pg.Client(database.url);
  await client.connect();
  await client.query('UPDATE library SET library_id = gen_random_uuid()::text');
  await client.end();
  return database;
}

export const ADMIN = { username: 'admin', password: 'admin-password-1' };

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface RequestOptions {
  body?: unknown;
  /** Session id sent raw as Authorization; `null` sends none. Defaults to the admin session. */
  session?: string | null;
  headers?: Record<string, string>;
}

export interface TestServer {
  app: FastifyInstance;
  url: string;
  dataDir: string;
  adminSession: string;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  signIn(username: string, password: string): Promise<string>;
  /** Creates a user (as admin) and returns a session of it. */
  userSession(
    username: string,
    role: 'viewer' | 'editor' | 'admin',
    allowEdit?: string[],
  ): Promise<string>;
  /** Stops the server; the data directory stays until `cleanup`. */
  stop(): Promise<void>;
  /** Stops the server and removes its data directory. */
  close(): Promise<void>;
}

let answers: OpenApiAnswers | undefined;

/**
 * Every answer `request` gets is checked against the server's OpenAPI document (status and JSON
 * body), so each HTTP test also tests the contract. Tests that call fetch themselves can use it.
 */
export function checkAnswer(
  app: FastifyInstance,
  method: string,
  path: string,
  response: { status: number; headers: Headers },
  body: unknown,
): void {
  answers ??= new OpenApiAnswers(app.swagger() as ConstructorParameters<typeof OpenApiAnswers>[0]);
  answers.check(method, path, response.status, response.headers.get('content-type') ?? '', body);
}

/** Test-only speed-up: a cheap scrypt cost (the default is OWASP's 2^17). */
export const FAST_AUTH = { scryptLogN: 10 };

export function makeTempDir(prefix = 'portfolio-test-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/**
 * Starts the real app on a free loopback port over a real data directory (on the PostgreSQL run,
 * also over a fresh database unless `database` is given).
 */
export async function startTestServer(options: Partial<AppOptions> = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? (await makeTempDir());
  let ownDatabase: TestDatabase | undefined;
  if (options.database === undefined && TEST_BACKEND === 'postgres' && droppedAtEnd) {
    ownDatabase = databases.get(dataDir) ?? (await testServerDatabase());
    databases.set(dataDir, ownDatabase);
  }
  const app = await buildApp({
    bootstrapAdmin: ADMIN,
    // One test server per directory: what it freed may go at once.
    sharedBlobGraceMs: 0,
    ...options,
    database: options.database ?? ownDatabase?.url,
    dataDir,
    auth: { ...FAST_AUTH, ...options.auth },
  });
  const url = (await app.listen({ host: '127.0.0.1', port: 0 })).replace('localhost', '127.0.0.1');
  let adminSession = '';

  const request = async <T>(
    method: string,
    path: string,
    opts: RequestOptions = {},
  ): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = { ...opts.headers };
    const session = opts.session === undefined ? adminSession : opts.session;
    if (session) headers.authorization = session;
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(url + path, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    if ((response.headers.get('content-type') ?? '').includes('json') && text)
      parsed = JSON.parse(text);
    checkAnswer(app, method, path, response, parsed);
    return { status: response.status, body: parsed as T, headers: response.headers };
  };

  const signIn = async (username: string, password: string) => {
    const response = await request<{ sessionId: string }>('POST', '/api/v1/appauth', {
      body: { username, password },
      session: null,
    });
    if (response.status !== 200)
      throw new Error(`sign-in failed: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body.sessionId;
  };

  // The admin signs in with the bootstrap credentials this start was given (ADMIN by default).
  const admin = { ...ADMIN, ...options.bootstrapAdmin };
  adminSession = await signIn(admin.username!, admin.password!);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await app.close();
  };

  return {
    app,
    url,
    dataDir,
    adminSession,
    request,
    signIn,
    async userSession(username, role, allowEdit = []) {
      const password = `${username}-password`;
      const created = await request('POST', '/api/v1/users', {
        body: { username, password, role, allowEdit },
      });
      if (created.status !== 201)
        throw new Error(`user create failed: ${JSON.stringify(created.body)}`);
      return signIn(username, password);
    },
    stop,
    async close() {
      await stop();
      await rm(dataDir, { recursive: true, force: true });
      if (ownDatabase && databases.get(dataDir) === ownDatabase) {
        databases.delete(dataDir);
        closedDatabases.push(ownDatabase);
      }
    },
  };
}

/** A valid create body; override what the test is about. */
export function portfolioBody(overrides: Record<string, unknown> = {}) {
  return {
    memberBarcode: 'M0001',
    category: 'Interior',
    projectTitle: 'Lake house',
    projectDetail: 'A timber house by the lake.',
    ...overrides,
  };
}

/** The embedded store under a test server, for tests of the store itself (faults, compaction). */
export function embeddedStore(app: FastifyInstance): Store {
  if (!(app.backend instanceof EmbeddedBackend)) throw new Error('not on the embedded store');
  return app.backend.store;
}
