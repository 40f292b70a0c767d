/**
 * npx tsx bench/list-budget.ts [--size 10000] [--seconds 5] [--spin-us 80] [--no-build]
 *
 * What issue 14's first target (the list, every URL new, at 10k ≥ 30 % of hello-world) leaves
 * for our own work on this machine: the CPU per request of each server process (from /proc,
 * 20 connections), not its rate, so that the figures add up:
 *
 * - hello-world (bench/hello-server.ts), and its rate, which sets the budget: at 0.30 of it, a
 *   list may cost 1 / (0.30 × rate) of the server's one thread;
 * - the list floor (bench/replay-server.ts): a bare Fastify route answering the workload's list
 *   URLs with our recorded bytes, as `npm run bench` measures it. The client is its bottleneck;
 * - the same floor spinning `--spin-us` per answer first: a server as busy per request as ours,
 *   so that the client waits for it. Its CPU per request less the spin is what HTTP and the
 *   socket cost a server that is the bottleneck (the client sleeps between answers, and waking
 *   it is charged to the server's send);
 * - ours, answer cache off: GET /api/v1/appauth (a session check and a small answer), one list
 *   URL of 5 items and one field, and the workload's lists (bench/list-workload.ts).
 *
 * Not part of `npm run bench`; run it on a quiet machine.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon, { type Result } from 'autocannon';
import { recordListAnswers, runWorkload, sendEach, type Request } from './list-workload';
import { makePortfolios, seedDataDir } from './seed';
import {
  buildServer,
  processCpu,
  SERVE_COMMAND,
  signIn,
  startOurs,
  startProcess,
} from './server-process';

const { values: args } = parseArgs({
  options: {
    size: { type: 'string', default: '10000' },
    seconds: { type: 'string', default: '5' },
    'spin-us': { type: 'string', default: '80' },
    'no-build': { type: 'boolean', default: false },
  },
});
const seconds = Number(args.seconds);
const spinUs = Number(args['spin-us']);

interface Cost {
  rate: number;
  cpuUs: number;
}

type Run = (seconds: number) => Promise<Result>;

/** CPU per request of process `pid` (from /proc) and its rate under `run`, after a 2 s warm-up. */
async function costOf(pid: number, run: Run): Promise<Cost> {
  await run(2);
  const before = processCpu(pid).total;
  const result = await run(seconds);
  const cpuMs = processCpu(pid).total - before;
  if (result.non2xx + result.errors > 0) throw new Error(`${result.non2xx} errors`);
  return { rate: result.requests.average, cpuUs: (cpuMs * 1000) / result.requests.total };
}

const fixed =
  (url: string, headers: Record<string, string> = {}) =>
  (duration: number) =>
    autocannon({ url, headers, connections: 20, duration });
const cycling = (url: string, requests: Request[], headers: Record<string, string> = {}) => {
  let next = 0;
  return (duration: number) =>
    autocannon({
      url,
      headers,
      connections: 20,
      duration,
      requests: sendEach(() => requests[next++ % requests.length]!),
    });
};

/** A bench server of its own (same node flags as ours), measured by `measure`, then stopped. */
async function bare(
  script: string,
  args: string[],
  env: Record<string, string>,
  measure: (url: string) => Run,
) {
  const nodeFlags = SERVE_COMMAND.filter((word) => word.startsWith('--'));
  const server = startProcess(
    [...nodeFlags, '--import', 'tsx', script, ...args],
    env,
    /LISTENING (\S+)/,
  );
  try {
    const url = (await server.match)[1]!;
    return await costOf(server.child.pid!, measure(url));
  } finally {
    await server.stop();
  }
}

if (!args['no-build']) buildServer();
const tmp = await mkdtemp(join(tmpdir(), 'portfolio-list-budget-'));
try {
  const records = makePortfolios(Number(args.size));
  const dataDir = join(tmp, 'data');
  await seedDataDir(dataDir, records);
  const ours = await startOurs(dataDir, { PORTFOLIO_LIST_CACHE_MB: '0' });
  const session = await signIn(ours.url);
  const headers = { authorization: session };
  const costs: Record<string, Cost> = {};
  let recorded: Awaited<ReturnType<typeof recordListAnswers>>;
  try {
    costs['ours: GET /api/v1/appauth'] = await costOf(
      ours.child.pid!,
      fixed(`${ours.url}/api/v1/appauth`, headers),
    );
    costs['ours: one list URL, 5 items, 1 field'] = await costOf(
      ours.child.pid!,
      fixed(
        `${ours.url}/api/v1/portfolio?filter=category:Interior&orderBy=createdTime-&field=portfolioId&pageSize=5`,
        headers,
      ),
    );
    costs['ours: list, every URL new'] = await costOf(ours.child.pid!, (duration) =>
      runWorkload({ url: ours.url, session }, records, {
        kind: 'list',
        seed: 7,
        seconds: duration,
        connections: 20,
      }),
    );
    recorded = await recordListAnswers(ours.url, headers, records, tmp);
    costs['ours: the floor’s URLs'] = await costOf(
      ours.child.pid!,
      cycling(ours.url, recorded.requests, headers),
    );
  } finally {
    await ours.stop();
  }
  costs['hello-world'] = await bare('bench/hello-server.ts', [], {}, (url) => fixed(url));
  costs['list floor'] = await bare('bench/replay-server.ts', [recorded.file], {}, (url) =>
    cycling(url, recorded.requests),
  );
  const spun = await bare(
    'bench/replay-server.ts',
    [recorded.file],
    { SPIN_US: String(spinUs) },
    (url) => cycling(url, recorded.requests),
  );
  costs[`list floor spinning ${spinUs} µs, less the spin`] = {
    rate: spun.rate,
    cpuUs: spun.cpuUs - spinUs,
  };

  console.log(`\nCPU per request of the server process at ${args.size} portfolios, 20 connections`);
  for (const [name, cost] of Object.entries(costs))
    console.log(
      `  ${name.padEnd(44)} ${cost.rate.toFixed(0).padStart(7)} req/s ${cost.cpuUs.toFixed(1).padStart(7)} µs`,
    );
  const hello = costs['hello-world']!;
  const budget = 1e6 / (0.3 * hello.rate);
  const http = costs[`list floor spinning ${spinUs} µs, less the spin`]!.cpuUs;
  const ourList = costs['ours: list, every URL new']!;
  console.log(
    `\nAt 0.30 of hello-world (${hello.rate.toFixed(0)} req/s) a list may cost ${budget.toFixed(0)} µs;` +
      ` HTTP and the socket of a server-bound answer of ${recorded.meanBodyBytes} bytes take ${http.toFixed(0)} µs of it,` +
      ` leaving ${(budget - http).toFixed(0)} µs for our own work, which takes ${(ourList.cpuUs - http).toFixed(0)} µs now` +
      ` (ours/hello-world now: ${(ourList.rate / hello.rate).toFixed(2)}).`,
  );
} finally {
  await rm(tmp, { recursive: true, force: true });
}
