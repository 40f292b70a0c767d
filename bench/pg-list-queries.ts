/**
 * The list workload's statements on PostgreSQL, in process, one at a time (issue 15): what each
 * list costs the database and this process, without HTTP, sessions or other clients. CPU time
 * (this process, and the database backend serving it, read from /proc) says more than rates on
 * a shared, busy machine.
 *
 *   npx tsx bench/pg-list-queries.ts --database postgres://…/db [--requests 400] [--cached]
 *
 * The database must hold the bench's portfolios (bench/seed.ts, e.g. a database --keep'd by
 * hand after seedPostgres). Without --cached every total is counted or read as if the library
 * had just changed (the worst case: the 95/5 mix); with it, through the repository and its
 * per-seq cache of counted totals.
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openDatabase } from '../server/storage/postgres/database';
import { listStatement } from '../server/storage/postgres/list-sql';
import { PgPortfolioRepository } from '../server/storage/postgres/pg-portfolio-repository';
import { listRequestOf, listWorkload } from './list-workload';
import { makePortfolios } from './seed';
import { processCpu } from './server-process';

const { values: args } = parseArgs({
  options: {
    database: { type: 'string' },
    requests: { type: 'string', default: '400' },
    size: { type: 'string', default: '100000' },
    cached: { type: 'boolean', default: false },
    kind: { type: 'string', default: 'list' },
  },
});
if (!args.database) throw new Error('--database postgres://… is required');

/** CPU seconds of a process so far (user + system), from /proc. */
const cpuSecondsOf = (pid: number) => processCpu(pid).total / 1000;
const workload = listWorkload(makePortfolios(Number(args.size)));
const next = args.kind === 'search' ? workload.search : workload.list;
const requests = Array.from({ length: Number(args.requests) }, () => listRequestOf(next().path));

const database = await openDatabase(args.database);
const client = new pg.Client({ connectionString: args.database });
await client.connect();
const repository = await PgPortfolioRepository.open(database.pool, { listPool: database.listPool });
const backends = async () =>
  (
    await client.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
         AND backend_type = 'client backend'`,
    )
  ).rows.map((row) => row.pid);

const times: number[] = [];
// One round first, so connections exist and the database's pages are in memory.
for (const request of requests.slice(0, 50)) await repository.query(request);
const pids = await backends();
const before = { node: process.cpuUsage(), db: pids.map(cpuSecondsOf) };
for (const request of requests) {
  const started = performance.now();
  if (args.cached) await repository.query(request);
  else {
    const { text, values } = listStatement(request, undefined);
    await database.pool.query(text, values);
  }
  times.push(performance.now() - started);
}
const node = process.cpuUsage(before.node);
const dbCpu = pids.map(cpuSecondsOf).reduce((sum, cpu, index) => sum + cpu - before.db[index]!, 0);
times.sort((a, b) => a - b);
const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
const mean = times.reduce((sum, time) => sum + time, 0) / times.length;
console.log(
  `${args.kind}${args.cached ? ' (cached totals)' : ''}, ${times.length} statements: ` +
    `mean ${mean.toFixed(2)} ms, p50 ${at(0.5).toFixed(2)}, p99 ${at(0.99).toFixed(2)}; ` +
    `CPU per list: node ${((node.user + node.system) / 1000 / times.length).toFixed(2)} ms, ` +
    `database ${((dbCpu * 1000) / times.length).toFixed(2)} ms`,
);
await client.end();
await database.close();
