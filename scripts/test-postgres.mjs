#!/usr/bin/env node
// The second test run: the HTTP suites (test/server/*.test.ts that start a test server) against
// PostgreSQL, each test server on a database of its own (PORTFOLIO_TEST_BACKEND=postgres). When
// PostgreSQL cannot be reached it says so and skips, unless PORTFOLIO_TEST_POSTGRES=require.
// Extra arguments go to vitest (e.g. a file filter).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

const url = process.env.PORTFOLIO_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const required = process.env.PORTFOLIO_TEST_POSTGRES === 'require';

const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
try {
  await client.connect();
  await client.query('SELECT 1');
} catch (error) {
  const reason = error.code ?? error.message;
  const where = new URL(url).host;
  console.error(
    `\nSKIPPED the PostgreSQL run of the HTTP suites: PostgreSQL at ${where} is unreachable ` +
      `(${reason}). Start it, or set PORTFOLIO_TEST_DATABASE_URL.`,
  );
  if (required) {
    console.error('PORTFOLIO_TEST_POSTGRES=require: failing.');
    process.exit(1);
  }
  process.exit(0);
} finally {
  await client.end().catch(() => {});
}

/**
 * Suites that test the embedded store itself, skipped here (single tests of that kind are marked
 * with `embeddedOnly` in their file instead).
 */
const SKIPPED = {
  'crash.test.ts': 'kill -9 of a server on the embedded store, its journal replayed',
  'storage-crash.test.ts': 'kill -9 during writes to the embedded journal',
  'storage-migrations.test.ts': "migrations of the embedded store's data layout",
  'storage-migrations-v1.test.ts': "migrations of the embedded store's data layout",
  // HTTP mechanics the backend takes no part in; the first run covers them.
  'hardening.test.ts': 'HTTP parsing, limits and timeouts: the same on both backends',
  'api-docs.test.ts': 'the API docs page: the same on both backends',
  'receive-file.test.ts': 'receiving an upload to a file: the same on both backends',
};

// The HTTP suites: those that start a real server (in-process or as a child process). The postgres-* ones already ran on PostgreSQL
// in the first run.
const dir = 'test/server';
const files = readdirSync(dir)
  .filter((name) => name.endsWith('.test.ts') && !name.startsWith('postgres-'))
  .filter((name) => {
    // A test server, or a server process started on a database in this run (TEST_BACKEND).
    const text = readFileSync(join(dir, name), 'utf8');
    return text.includes('startTestServer') || text.includes('TEST_BACKEND');
  })
  .filter((name) => {
    if (!SKIPPED[name]) return true;
    console.log(`skipped on PostgreSQL: ${name} (${SKIPPED[name]})`);
    return false;
  })
  .map((name) => join(dir, name));

console.log(
  `\nThe HTTP suites again, on PostgreSQL at ${new URL(url).host} (${files.length} files)`,
);
const run = spawnSync('npx', ['vitest', 'run', ...files, ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, PORTFOLIO_TEST_BACKEND: 'postgres' },
});
process.exit(run.status ?? 1);
