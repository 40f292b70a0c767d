/**
 * Two or more builds of the server on the embedded store, measured in turns (A B A B …) under one
 * kind of the list workload (bench/list-workload.ts, answer cache off), each on its own copy of
 * one seeded data directory: a before/after comparison of the CPU a list request costs, which a
 * busy, shared machine skews far less than req/s (both are reported).
 *
 *   npx tsx bench/list-cpu-ab.ts --builds before=DIR,after=. [--size 10000] [--rounds 4]
 *                                [--seconds 5] [--kind list|search|mixed] [--data-dir DIR]
 *
 * DIR is a folder holding a built `out/server/cli.js` (e.g. a copy of `out/server` from before a
 * change in DIR/out/server, with `node_modules` and `package.json` linked or copied into DIR);
 * `.` is this checkout's build (`npm run build:server` first). `--data-dir` keeps the seeded
 * portfolios between runs (seeded when empty); by default a temporary one is made and removed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { buildEveryTree, runWorkload, type WorkloadKind } from './list-workload';
import { makePortfolios, seedDataDir } from './seed';
import { ADMIN, processCpu, SERVE_COMMAND, signIn, startProcess } from './server-process';

const { values: args } = parseArgs({
  options: {
    builds: { type: 'string' },
    size: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '20' },
    kind: { type: 'string', default: 'list' },
    'data-dir': { type: 'string' },
  },
});
if (!args.builds) throw new Error('--builds name=DIR,name=DIR is required');
const builds = args.builds.split(',').map((spec) => {
  const [name, dir] = spec.split('=') as [string, string];
  return { name, dir: resolve(dir) };
});

const records = makePortfolios(Number(args.size));
const tmp = await mkdtemp(join(tmpdir(), 'portfolio-list-ab-'));
const seeded = args['data-dir'] ?? join(tmp, 'seeded');
if (!existsSync(join(seeded, 'db.json'))) await seedDataDir(seeded, records);

async function start(name: string, dir: string) {
  const [flags, cli] = [SERVE_COMMAND.slice(0, -2), SERVE_COMMAND.at(-2)!];
  const dataDir = join(tmp, name);
  await cp(seeded, dataDir, { recursive: true });
  const server = startProcess(
    [...flags, join(dir, cli), 'serve', '--port', '0', '--data-dir', dataDir],
    {
      PORTFOLIO_ADMIN_USERNAME: ADMIN.username,
      PORTFOLIO_ADMIN_PASSWORD: ADMIN.password,
      PORTFOLIO_LOG_LEVEL: 'warn',
      PORTFOLIO_LIST_CACHE_MB: '0',
    },
    /API: +(http:\/\/\S+)\/api\/v1/,
  );
  const url = (await server.match)[1]!;
  return { name, url, session: await signIn(url), ...server };
}

type Started = Awaited<ReturnType<typeof start>>;

async function measure(server: Started, seed: number, seconds: number) {
  const before = processCpu(server.child.pid!);
  const result = await runWorkload(server, records, {
    kind: args.kind as WorkloadKind,
    seed,
    seconds,
    connections: Number(args.connections),
  });
  const count = result.requests.total;
  const after = processCpu(server.child.pid!);
  const userUs = ((after.user - before.user) * 1000) / count;
  const systemUs = ((after.system - before.system) * 1000) / count;
  return {
    rate: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors,
    cpuUs: userUs + systemUs,
    userUs,
    systemUs,
  };
}

const servers: Started[] = [];
try {
  for (const build of builds) servers.push(await start(build.name, build.dir));
  for (const server of servers) {
    await buildEveryTree(server.url, { authorization: server.session });
    await measure(server, 99, 3); // warm-up: JIT, trees of every memberBarcode asked
  }
  const rows = new Map<string, Array<Awaited<ReturnType<typeof measure>>>>(
    servers.map((server) => [server.name, []]),
  );
  for (let round = 0; round < Number(args.rounds); round++) {
    // Rotate who goes first, so no build always follows another's load.
    const order = servers.map((_, at) => servers[(at + round) % servers.length]!);
    for (const server of order) {
      const row = await measure(server, 7 + round, Number(args.seconds));
      rows.get(server.name)!.push(row);
      const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
      console.log(
        `round ${round} ${server.name}: ${row.rate.toFixed(0)} req/s, p50 ${row.p50} p99 ${row.p99} ms, ` +
          `CPU per request ${row.cpuUs.toFixed(0)} µs (user ${row.userUs.toFixed(0)}, ` +
          `system ${row.systemUs.toFixed(0)}); errors ${row.errors}; load ${load}`,
      );
    }
  }
  const median = (values: number[]) => {
    const sorted = [...values].sort((x, y) => x - y);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  };
  for (const [name, list] of rows)
    console.log(
      `${name} median: ${median(list.map((row) => row.rate)).toFixed(0)} req/s, CPU per request ` +
        `${median(list.map((row) => row.cpuUs)).toFixed(0)} µs (user ` +
        `${median(list.map((row) => row.userUs)).toFixed(0)}, system ` +
        `${median(list.map((row) => row.systemUs)).toFixed(0)})`,
    );
} finally {
  for (const server of servers) await server.stop();
  await rm(tmp, { recursive: true, force: true });
}
