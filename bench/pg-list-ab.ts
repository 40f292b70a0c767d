/**
 * Two builds of the server on one PostgreSQL database, measured in turns (A B A B …) under the
 * list workload (bench/list-workload.ts, answer cache off): a before/after comparison that a
 * busy, shared machine cannot skew the way two runs minutes apart can. Besides req/s it reports
 * the CPU each server process and the database backends spent per list (from /proc), which
 * depend far less on what else runs.
 *
 *   npx tsx bench/pg-list-ab.ts --database postgres://…/db --a DIR --b DIR [--rounds 4] [--seconds 5]
 *     [--b-database postgres://…/copy]
 *
 * DIR is a folder holding a built `out/server/cli.js` (e.g. a copy of `out` from before a change,
 * with `node_modules` and `package.json` linked or copied next to it); `--b .` is this checkout's
 * build. The database must hold the bench's portfolios (bench/seed.ts seedPostgres) for `--size`.
 * `--b-database`: B on a copy of it instead (`CREATE DATABASE copy TEMPLATE db`), for a B that
 * migrates the schema to a version A refuses.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { runWorkload, type WorkloadKind } from './list-workload';
import { makePortfolios } from './seed';
import { ADMIN, processCpu, SERVE_COMMAND, signIn, startProcess } from './server-process';

const { values: args } = parseArgs({
  options: {
    database: { type: 'string' },
    'b-database': { type: 'string' },
    a: { type: 'string' },
    b: { type: 'string', default: '.' },
    size: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '20' },
    kind: { type: 'string', default: 'list' },
  },
});
if (!args.database || !args.a) throw new Error('--database URL and --a DIR are required');

/** A backend's CPU so far, or 0 if it ended since it was listed (an idle connection closed). */
function cpuOrZero(pid: number): number {
  try {
    return processCpu(pid).total;
  } catch {
    return 0;
  }
}

const records = makePortfolios(Number(args.size));
const tmp = await mkdtemp(join(tmpdir(), 'portfolio-ab-'));
const databases = { A: args.database, B: args['b-database'] ?? args.database };
const admin = new pg.Client({ connectionString: args.database });
await admin.connect();
const backendPids = async () =>
  (
    await admin.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = ANY($1::text[])
         AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
      [Object.values(databases).map((url) => new URL(url).pathname.slice(1))],
    )
  ).rows.map((row) => row.pid);

async function start(name: 'A' | 'B', dir: string) {
  const [flags, cli] = [SERVE_COMMAND.slice(0, -2), SERVE_COMMAND.at(-2)!];
  const server = startProcess(
    [...flags, join(resolve(dir), cli), 'serve', '--port', '0', '--data-dir', join(tmp, name)],
    {
      PORTFOLIO_ADMIN_USERNAME: ADMIN.username,
      PORTFOLIO_ADMIN_PASSWORD: ADMIN.password,
      PORTFOLIO_LOG_LEVEL: 'warn',
      PORTFOLIO_LIST_CACHE_MB: '0',
      PORTFOLIO_DATABASE_URL: databases[name],
    },
    /API: +(http:\/\/\S+)\/api\/v1/,
  );
  const url = (await server.match)[1]!;
  return { name, url, session: await signIn(url), ...server };
}

type Started = Awaited<ReturnType<typeof start>>;

async function measure(server: Started, seed: number, seconds: number) {
  const before = {
    node: processCpu(server.child.pid!).total,
    db: new Map((await backendPids()).map((pid) => [pid, cpuOrZero(pid)])),
  };
  const result = await runWorkload(server, records, {
    kind: args.kind as WorkloadKind,
    seed,
    seconds,
    connections: Number(args.connections),
  });
  const count = result.requests.total;
  const node = processCpu(server.child.pid!).total - before.node;
  // Backends opened meanwhile count whole; those that ended meanwhile are lost (pools close
  // connections idle for 10 s, so it is those of the other server, idle).
  const db = (await backendPids()).reduce((sum, pid) => {
    try {
      return sum + processCpu(pid).total - (before.db.get(pid) ?? 0);
    } catch {
      return sum;
    }
  }, 0);
  return {
    rate: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors,
    nodeMs: node / count,
    dbMs: db / count,
  };
}

const servers = [await start('A', args.a), await start('B', args.b)];
try {
  for (const server of servers) await measure(server, 99, 3); // warm-up: plans, pools, JIT
  const rows: Record<string, Array<Awaited<ReturnType<typeof measure>>>> = { A: [], B: [] };
  for (let round = 0; round < Number(args.rounds); round++) {
    // Alternate who goes first, so neither always follows the other's load.
    const order = round % 2 === 0 ? servers : [...servers].reverse();
    for (const server of order) {
      const row = await measure(server, 7 + round, Number(args.seconds));
      rows[server.name]!.push(row);
      const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
      console.log(
        `round ${round} ${server.name}: ${row.rate.toFixed(0)} req/s, p50 ${row.p50} p99 ${row.p99} ms, ` +
          `CPU per list: node ${row.nodeMs.toFixed(2)} ms, database ${row.dbMs.toFixed(2)} ms; ` +
          `errors ${row.errors}; load ${load}`,
      );
    }
  }
  const median = (values: number[]) => {
    const sorted = [...values].sort((x, y) => x - y);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  };
  for (const name of ['A', 'B']) {
    const list = rows[name]!;
    console.log(
      `${name} median: ${median(list.map((row) => row.rate)).toFixed(0)} req/s, CPU per list node ` +
        `${median(list.map((row) => row.nodeMs)).toFixed(2)} ms, database ` +
        `${median(list.map((row) => row.dbMs)).toFixed(2)} ms`,
    );
  }
} finally {
  for (const server of servers) await server.stop();
  await admin.end();
  await rm(tmp, { recursive: true, force: true });
}
