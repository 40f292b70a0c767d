import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { connectionFailure } from '../../server/storage/postgres/database';

/**
 * The server the PostgreSQL tests use: PORTFOLIO_TEST_DATABASE_URL, or the development and CI
 * machines' own (127.0.0.1:5432, trust auth). Each test file makes its own databases in it.
 */
export const POSTGRES_URL =
  process.env.PORTFOLIO_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** With PORTFOLIO_TEST_POSTGRES=require (CI), an unreachable server fails the run instead. */
const REQUIRED = process.env.PORTFOLIO_TEST_POSTGRES === 'require';

/** The URL of database `name` on the test server (which need not exist). */
export function databaseUrl(name: string): string {
  const parsed = new URL(POSTGRES_URL);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Why PostgreSQL cannot be used for tests, or undefined when it can. When it cannot, the reason
 * is printed once, so a run that skips them says so instead of passing silently.
 */
export async function postgresUnavailable(suite: string): Promise<string | undefined> {
  try {
    await withAdmin((client) => client.query('SELECT 1'));
    return undefined;
  } catch (error) {
    const where = new URL(POSTGRES_URL).host;
    const reason = `PostgreSQL at ${where} is unreachable: ${connectionFailure(error) ?? String(error)}`;
    if (REQUIRED) throw new Error(`${reason}; PORTFOLIO_TEST_POSTGRES=require`);
    console.warn(`SKIPPED ${suite}: ${reason}. Start it, or set PORTFOLIO_TEST_DATABASE_URL.`);
    return reason;
  }
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/**
 * A new database of its own (`pm_test_<random>`), dropped by `drop()`: empty, or a copy of
 * `template` (a database nobody is connected to).
 */
export async function createTestDatabase(template?: string): Promise<TestDatabase> {
  const name = `pm_test_${randomBytes(6).toString('hex')}`;
  await withAdmin((client) =>
    client.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`),
  );
  return {
    name,
    url: databaseUrl(name),
    drop: async () => {
      await withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}
