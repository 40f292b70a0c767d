/**
 * npm run bench -- [--size 1000|10000|100000] [--duration seconds] [--connections n] [--no-upload]
 *                  [--database postgres://…]
 *
 * Seeds a temp data directory with N portfolios, starts the real server as a child process and
 * measures it with autocannon: lists with every URL new (the headline), the same mixed with 5 %
 * updates, full-text searches, and the cached list on its own row. In the same run it measures a
 * bare Fastify hello-world (right before the list rows and right after the search row: the
 * baseline is their median) and json-server 0.17 over the same portfolios, prints our figures as
 * ratios to those baselines and writes bench/results/<date>-<size>.json. Ends with
 * bench/upload.ts when it exists. With --database, the same figures on PostgreSQL too (a database
 * of its own made on that server and dropped after), and a table of both backends.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon, { type Result } from 'autocannon';
import pg from 'pg';
import type { PortfolioRecord } from '../shared';
import {
  buildEveryTree,
  CACHED_LIST_PATH,
  latenciesByMethod,
  listWorkload,
  ORDERS,
  percentiles,
  recordListAnswers,
  sendEach,
  type Latencies,
  type Request,
} from './list-workload';
import { makePortfolios, seedDataDir, seedJsonServer, seedPostgres } from './seed';
import {
  buildServer,
  ROOT,
  SERVE_COMMAND,
  signIn,
  startOurs,
  startProcess,
  timed,
  type Server,
} from './server-process';

const RESULTS_DIR = join(ROOT, 'bench', 'results');
const LIST_CATEGORY = 'Interior'; // one category in ten
const PAGE = 100;

const { values: args } = parseArgs({
  options: {
    size: { type: 'string', default: '10000' },
    duration: { type: 'string', default: '6' },
    connections: { type: 'string', default: '20' },
    'no-upload': { type: 'boolean', default: false },
    database: { type: 'string' },
  },
});
const DATABASE_URL = args.database;
const SIZE = Number(args.size);
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);
if (![1000, 10000, 100000].includes(SIZE)) throw new Error('--size must be 1000, 10000 or 100000');

interface Measurement {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** Latencies per HTTP method, when asked for (the 95/5 mix: its lists and its updates). */
  byMethod?: Record<string, Latencies>;
}

interface PagingMeasurement {
  pagesPerSecond: number;
  pages: number;
  items: number;
  seconds: number;
  p50: number;
  p99: number;
  reachedEnd: boolean;
}

// ---------------------------------------------------------------- processes

async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function startJsonServer(dbFile: string, probePath: string): Promise<Server> {
  const port = await freePort();
  const bin = join(ROOT, 'node_modules', 'json-server', 'lib', 'cli', 'bin.js');
  const { child, stop } = startProcess(
    [bin, '--port', String(port), '--host', '127.0.0.1', '--quiet', '--id', 'portfolioId', dbFile],
    {},
    /$^/,
  );
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt++) {
    const ok = await fetch(url + probePath).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) break;
    if (attempt > 600) throw new Error('json-server did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, url, stop };
}

async function startHello(): Promise<Server> {
  // The same node flags as our server, so the ceiling runs on the same heap settings.
  const nodeFlags = SERVE_COMMAND.filter((word) => word.startsWith('--'));
  const { child, match, stop } = startProcess(
    [...nodeFlags, '--import', 'tsx', 'bench/hello-server.ts'],
    {},
    /LISTENING (\S+)/,
  );
  return { child, url: (await match)[1]!, stop };
}

/** Resident and peak memory of a child, from /proc (Linux); null elsewhere. */
async function memoryOf(pid: number): Promise<{ rssMb: number; peakMb: number } | null> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
    return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------- measurements

async function load(
  title: string,
  url: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body?: unknown;
    /** A new request for every send (a different URL, or an update among lists). */
    each?: () => Request;
    seconds?: number;
    /** Keep each method's latencies apart as well (`byMethod`). */
    byMethod?: boolean;
  } = {},
): Promise<Measurement> {
  process.stdout.write(`  ${title} ... `);
  const each = options.each;
  const instance = autocannon({
    url,
    connections: CONNECTIONS,
    duration: options.seconds ?? DURATION,
    method: options.method ?? 'GET',
    headers: {
      ...options.headers,
      ...(options.body ? { 'content-type': 'application/json' } : {}),
    },
    body: options.body ? JSON.stringify(options.body) : undefined,
    requests: each ? sendEach(each) : undefined,
  });
  const byMethod = options.byMethod ? latenciesByMethod(instance) : null;
  const result: Result = await instance;
  const measurement: Measurement = {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
  if (byMethod) measurement.byMethod = byMethod.take();
  console.log(
    `${measurement.rps.toFixed(0)} req/s, p50 ${measurement.p50} ms, p99 ${measurement.p99} ms`,
  );
  if (result.non2xx > 0 || result.errors > 0)
    console.log(`    warning: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return measurement;
}

/** One client walking every page in turn, as a sync client would; capped at a few seconds. */
async function walkPages(
  title: string,
  first: string,
  headers: Record<string, string>,
  next: (body: unknown, url: string) => string | null,
): Promise<PagingMeasurement> {
  process.stdout.write(`  ${title} ... `);
  const latencies: number[] = [];
  let items = 0;
  let url: string | null = first;
  const started = performance.now();
  while (url && performance.now() - started < DURATION * 1000 * 1.5) {
    const before = performance.now();
    const response = await fetch(url, { headers });
    if (!response.ok) throw new Error(`${title}: ${response.status} ${await response.text()}`);
    const body = (await response.json()) as unknown;
    latencies.push(performance.now() - before);
    items += Array.isArray(body) ? body.length : (body as { lists: unknown[] }).lists.length;
    url = next(body, url);
  }
  const seconds = (performance.now() - started) / 1000;
  const { p50, p99 } = percentiles(latencies);
  const measurement = {
    pagesPerSecond: latencies.length / seconds,
    pages: latencies.length,
    items,
    seconds,
    p50,
    p99,
    reachedEnd: url === null,
  };
  console.log(
    `${measurement.pages} pages (${items} items) in ${seconds.toFixed(2)} s${measurement.reachedEnd ? '' : ' (stopped before the end)'}, ` +
      `${measurement.pagesPerSecond.toFixed(0)} pages/s, p50 ${measurement.p50} ms`,
  );
  return measurement;
}

/**
 * The ceiling for list answers of the sizes ours gives: `count` list URLs of the workload (a
 * sequence of their own), each answered once by ours and recorded; then the same bytes served by
 * a bare Fastify route (bench/replay-server.ts, same node flags) and ours on the same URLs, one
 * after the other. Ours/floor is the share of a list's cost that is our own work.
 */
async function measureListFloor(
  url: string,
  headers: Record<string, string>,
  records: PortfolioRecord[],
  dir: string,
  count = 400,
) {
  const { requests, file, meanBodyBytes } = await recordListAnswers(
    url,
    headers,
    records,
    dir,
    count,
  );
  const nodeFlags = SERVE_COMMAND.filter((word) => word.startsWith('--'));
  const { match, stop } = startProcess(
    [...nodeFlags, '--import', 'tsx', 'bench/replay-server.ts', file],
    {},
    /LISTENING (\S+)/,
  );
  let next = 0;
  const cycle = () => requests[next++ % requests.length]!;
  let floor: Measurement;
  try {
    const replayUrl = (await match)[1]!;
    await load('bare Fastify, same answers: warm-up, not counted', replayUrl, {
      each: cycle,
      seconds: 2,
    });
    floor = await load('the same list answers from a bare Fastify route (floor)', replayUrl, {
      each: cycle,
    });
  } finally {
    await stop();
    await rm(file, { force: true });
  }
  const ours = await load('ours on the same list URLs', url, { headers, each: cycle });
  return { urls: count, meanBodyBytes, floor, ours };
}

/**
 * fdatasync latency of a small append on the disk of `dir`, the machine idle: the floor of any
 * durable write's latency here (an update waits for one, shared with the updates beside it).
 */
async function fdatasyncLatency(dir: string, count = 200): Promise<Latencies> {
  const file = join(dir, `fdatasync-probe-${randomBytes(4).toString('hex')}`);
  const handle = await open(file, 'a');
  const line = Buffer.alloc(256, 'x');
  const latencies: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      await handle.write(line);
      await handle.datasync();
      latencies.push(performance.now() - started);
    }
  } finally {
    await handle.close();
    await rm(file, { force: true });
  }
  return percentiles(latencies);
}

// ---------------------------------------------------------------- the run

const createBody = {
  memberBarcode: 'M000001',
  category: LIST_CATEGORY,
  projectTitle: 'Bench portfolio',
  projectDetail: 'Created by the benchmark. '.repeat(10),
  generalTag: ['bench'],
};

/**
 * The first request of each kind builds what it needs (the trees of an order or of a filter key,
 * the search index): none may take seconds. Answers each one's latency in ms.
 */
async function firstOfEachKind(
  url: string,
  headers: Record<string, string>,
  records: PortfolioRecord[],
): Promise<Record<string, number>> {
  const list = (params: Record<string, string>): Request => ({
    method: 'GET',
    path: `/api/v1/portfolio?${new URLSearchParams({ pageSize: '50', field: 'portfolioId,projectTitle,createdTime', ...params })}`,
  });
  const kinds: Record<string, Request> = {};
  for (const orderBy of ORDERS) kinds[`list orderBy=${orderBy}`] = list({ orderBy });
  kinds['list filter=memberBarcode'] = list({
    filter: `memberBarcode:${records[0]!.memberBarcode}`,
    orderBy: 'projectTitle-',
  });
  kinds['list filter=staffPick'] = list({ filter: 'staffPick:true', orderBy: 'modifiedTime-' });
  kinds['list filter=category,staffPick'] = list({
    filter: 'category:Fashion,staffPick:false',
    orderBy: 'category,projectTitle',
  });
  kinds['search q=house'] = list({ q: 'house' });
  kinds['search q=ho ga, orderBy=relevance'] = list({ q: 'ho ga', orderBy: 'relevance' });
  const firsts: Record<string, number> = {};
  for (const [kind, request] of Object.entries(kinds))
    firsts[kind] = await timed(url, headers, request);
  return firsts;
}

async function measureOurs(
  dataDir: string,
  records: PortfolioRecord[],
  detailId: string,
  env: Record<string, string> = {},
) {
  // First start: bootstraps the admin and the page-token secret; the session outlives restarts.
  const warm = await startOurs(dataDir, env);
  const sessionId = await signIn(warm.url);
  await warm.stop();

  const headers = { authorization: sessionId };
  const workload = listWorkload(records);

  // Cold start: process spawn to the first list answered.
  const started = performance.now();
  const server = await startOurs(dataDir, env);
  let firstAnswerMs = 0;
  for (;;) {
    const response = await fetch(server.url + CACHED_LIST_PATH, { headers });
    if (response.ok) {
      await response.arrayBuffer();
      firstAnswerMs = performance.now() - started;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const idleMemory = await memoryOf(server.child.pid!);
  console.log(
    `  cold start: listening after ${server.readyMs.toFixed(0)} ms, first list answered after ${firstAnswerMs.toFixed(0)} ms, RSS ${idleMemory?.rssMb.toFixed(0)} MB`,
  );
  const firsts = await firstOfEachKind(server.url, headers, records);
  console.log(
    `  first request of each kind (ms): ${Object.entries(firsts)
      .map(([kind, ms]) => `${kind} ${ms}`)
      .join('; ')}`,
  );
  const builtMemory = await memoryOf(server.child.pid!);

  const listCached = await load(
    'list, same URL again (answer cache)',
    server.url + CACHED_LIST_PATH,
    { headers },
  );
  const paging = await walkPages(
    'list paging to the end',
    server.url + CACHED_LIST_PATH,
    headers,
    (body) => {
      const token = (body as { nextPageToken: string }).nextPageToken;
      return token
        ? `${server.url}${CACHED_LIST_PATH}&pageToken=${encodeURIComponent(token)}`
        : null;
    },
  );
  const detail = await load('detail', `${server.url}/api/v1/portfolio/${detailId}`, { headers });
  await server.stop();

  // Every URL new: on a server with the answer cache off, so that no answer can come from it
  // (a repeated URL would, and the random URLs do repeat now and then). Its trees are built first
  // by the same kinds of request, as on the server above.
  const uncached = await startOurs(dataDir, { ...env, PORTFOLIO_LIST_CACHE_MB: '0' });
  await firstOfEachKind(uncached.url, headers, records);
  // Every order with every category and staffPick value once: the large trees the mix below
  // needs, built before it is measured (at 100k on a busy machine a short warm-up of random URLs
  // did not reach them all, and the headline then measured their builds).
  await buildEveryTree(uncached.url, headers);
  // Each order and filter value builds its trees on first use (the first requests above show
  // what one costs); a short warm-up of the same mix, not counted, lets the measurement show the
  // steady state. Its URLs come from another sequence, so the measured ones are still all new.
  const warmUp = listWorkload(records, 99);
  await load('warm-up, not counted', uncached.url, { headers, each: warmUp.mixed, seconds: 2 });
  await load('warm-up, not counted', uncached.url, { headers, each: warmUp.search, seconds: 1 });
  // The baseline: hello-world right before and right after the rows it is compared with, same
  // duration and connections; the ratios use the median of the two (see bench/README.md).
  const helloServer = await startHello();
  // Ours idle first: the warm-ups' last requests answered (a list queues behind them) and any
  // build they started done, or the baseline would share the CPUs with them.
  await timed(uncached.url, headers, warmUp.list());
  await new Promise((resolve) => setTimeout(resolve, 1000));
  // A new process, warmed up as ours was (its first seconds ran at half its rate).
  await load('hello-world warm-up, not counted', helloServer.url, { seconds: 2 });
  const helloBefore = await load('Fastify hello-world (baseline, before)', helloServer.url);
  const listUncached = await load('list, every URL new', uncached.url, {
    headers,
    each: workload.list,
  });
  const mixed = await load('95 % lists + 5 % updates', uncached.url, {
    headers,
    each: workload.mixed,
    byMethod: true,
  });
  const search = await load('search (q), every URL new', uncached.url, {
    headers,
    each: workload.search,
  });
  // Facets (DESIGN §16) beside the list in the same run: half of the whole library, half of a
  // filter's matches (see listWorkload).
  const facets = await load('facets, half of them filtered', uncached.url, {
    headers,
    each: workload.facets,
  });
  const helloAfter = await load('Fastify hello-world (baseline, after)', helloServer.url);
  await helloServer.stop();
  const listFloor = await measureListFloor(uncached.url, headers, records, dirname(dataDir));
  const fdatasync = await fdatasyncLatency(dataDir);
  console.log(
    `  fdatasync of a 256-byte append, idle: p50 ${fdatasync.p50} ms, p99 ${fdatasync.p99} ms`,
  );
  // Last: creates add thousands of portfolios.
  const update = await load('update', `${uncached.url}/api/v1/portfolio/${detailId}`, {
    method: 'PUT',
    headers,
    body: { ...createBody, projectTitle: 'Updated by the benchmark' },
  });
  const create = await load('create', `${uncached.url}/api/v1/portfolio`, {
    method: 'POST',
    headers,
    body: createBody,
  });
  const loadedMemory = await memoryOf(uncached.child.pid!);
  await uncached.stop();
  return {
    hello: baselineOf(helloBefore, helloAfter),
    coldStart: {
      listeningMs: server.readyMs,
      firstListMs: firstAnswerMs,
      firstOfEachKindMs: firsts,
    },
    memory: {
      idleRssMb: idleMemory?.rssMb ?? null,
      builtRssMb: builtMemory?.rssMb ?? null,
      peakRssMb: loadedMemory?.peakMb ?? null,
    },
    list: listCached,
    listUncached,
    listFloor,
    mixed,
    fdatasync,
    search,
    facets,
    paging,
    detail,
    update,
    create,
  };
}

async function measureJsonServer(dbFile: string, detailId: string) {
  const server = await startJsonServer(dbFile, `/portfolios/${detailId}`);
  const listPath = `/portfolios?category=${LIST_CATEGORY}&_sort=createdTime&_order=desc&_page=1&_limit=${PAGE}`;
  const list = await load('list (filter + sort + page 100)', server.url + listPath);
  const paging = await walkPages(
    'list paging to the end',
    server.url + listPath,
    {},
    (body, url) => {
      if ((body as unknown[]).length < PAGE) return null;
      const page = Number(/_page=(\d+)/.exec(url)![1]);
      return url.replace(/_page=\d+/, `_page=${page + 1}`);
    },
  );
  const detail = await load('detail', `${server.url}/portfolios/${detailId}`);
  const update = await load('update', `${server.url}/portfolios/${detailId}`, {
    method: 'PUT',
    body: { ...createBody, portfolioId: detailId },
  });
  const create = await load('create', `${server.url}/portfolios`, {
    method: 'POST',
    body: createBody,
  });
  await server.stop();
  return { list, paging, detail, update, create };
}

/**
 * The hello-world baseline of one run: measured right before the list rows and right after the
 * search row, the same way as they are; its rate is the median of the two (with two, their
 * mean), its spread how far apart they were.
 */
function baselineOf(before: Measurement, after: Measurement) {
  const rps = (before.rps + after.rps) / 2;
  return {
    rps,
    p50: (before.p50 + after.p50) / 2,
    p99: (before.p99 + after.p99) / 2,
    before,
    after,
    spread: Math.abs(before.rps - after.rps) / rps,
  };
}

/** The newest earlier result for `size`, for the targets that compare sizes. */
interface SavedResult {
  ours: { create: Measurement };
  jsonServer: { create: Measurement };
  ratios: { listUncachedVsHello?: number | null };
}

async function latestResult(size: number): Promise<SavedResult | null> {
  const names = (await readdir(RESULTS_DIR).catch(() => [] as string[]))
    // <date>-<size>.json only: not <date>-history-<size>.json, which sorts after it.
    .filter((name) => new RegExp(`^\\d{4}-\\d{2}-\\d{2}-${size}\\.json$`).test(name))
    .sort();
  const name = names.at(-1);
  return name ? (JSON.parse(await readFile(join(RESULTS_DIR, name), 'utf8')) as SavedResult) : null;
}

const ratio = (a: number, b: number | undefined | null) => (b ? a / b : null);
const fmt = (value: number | null, digits = 2) => (value === null ? 'n/a' : value.toFixed(digits));

/**
 * A database of its own on the --database server, dropped after the run, with the settings that
 * decide how durable (and how fast) a commit is there.
 */
async function benchDatabase(url: string) {
  const name = `portfolio_bench_${randomBytes(4).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(sql)).rows;
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const [commit] = await admin('SHOW synchronous_commit');
  const [fsync] = await admin('SHOW fsync');
  const [version] = await admin('SHOW server_version');
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return {
    url: parsed.toString(),
    settings: {
      synchronousCommit: commit.synchronous_commit as string,
      fsync: fsync.fsync as string,
      serverVersion: version.server_version as string,
    },
    drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

async function measurePostgres(
  url: string,
  tmp: string,
  records: PortfolioRecord[],
  detailId: string,
) {
  const database = await benchDatabase(url);
  try {
    const seedStarted = performance.now();
    await seedPostgres(database.url, records);
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    console.log(
      `PostgreSQL ${database.settings.serverVersion} (synchronous_commit ${database.settings.synchronousCommit}, fsync ${database.settings.fsync}; seeded in ${seedSeconds.toFixed(1)} s):`,
    );
    const measured = await measureOurs(join(tmp, 'pg-files'), records, detailId, {
      PORTFOLIO_DATABASE_URL: database.url,
    });
    return { ...measured, seedSeconds, settings: database.settings };
  } finally {
    await database.drop();
  }
}

async function main(): Promise<void> {
  buildServer();
  const tmp = await mkdtemp(join(tmpdir(), 'portfolio-bench-'));
  try {
    console.log(
      `Portfolio Manager bench: ${SIZE} portfolios, ${DURATION} s per measurement, ${CONNECTIONS} connections, ${cpus().length} CPUs`,
    );
    const records = makePortfolios(SIZE);
    const detailId = records[Math.floor(SIZE / 2)]!.portfolioId;
    const dataDir = join(tmp, 'data');
    const dbFile = join(tmp, 'json-server-db.json');
    const seedStarted = performance.now();
    await seedDataDir(dataDir, records);
    await seedJsonServer(dbFile, records);
    console.log(`seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);

    console.log('Portfolio Manager:');
    const ours = await measureOurs(dataDir, records, detailId);
    const postgres = DATABASE_URL
      ? await measurePostgres(DATABASE_URL, tmp, records, detailId)
      : null;
    console.log('json-server 0.17:');
    const jsonServer = await measureJsonServer(dbFile, detailId);
    const hello = ours.hello;

    const create1k = SIZE === 1000 ? ours.create.rps : (await latestResult(1000))?.ours.create.rps;
    const at10k = SIZE === 10000 ? null : await latestResult(10000);
    const jsonCreate10k = SIZE === 10000 ? jsonServer.create.rps : at10k?.jsonServer.create.rps;
    const ratios = {
      listVsHello: ratio(ours.list.rps, hello.rps),
      listVsJsonServer: ratio(ours.list.rps, jsonServer.list.rps),
      listUncachedVsHello: ratio(ours.listUncached.rps, hello.rps),
      listUncachedVsJsonServer: ratio(ours.listUncached.rps, jsonServer.list.rps),
      listUncachedVsListUncachedAt10k: ratio(
        ours.listUncached.rps / hello.rps,
        SIZE === 10000 ? ours.listUncached.rps / hello.rps : at10k?.ratios.listUncachedVsHello,
      ),
      mixedVsHello: ratio(ours.mixed.rps, hello.rps),
      mixedVsListUncached: ratio(ours.mixed.rps, ours.listUncached.rps),
      mixedP99VsP50: ratio(ours.mixed.p99, ours.mixed.p50),
      mixedListsP99VsP50: ratio(
        ours.mixed.byMethod?.GET?.p99 ?? 0,
        ours.mixed.byMethod?.GET?.p50 ?? null,
      ),
      listFloorVsHello: ratio(ours.listFloor.floor.rps, hello.rps),
      listVsListFloor: ratio(ours.listFloor.ours.rps, ours.listFloor.floor.rps),
      searchVsHello: ratio(ours.search.rps, hello.rps),
      searchVsListUncached: ratio(ours.search.rps, ours.listUncached.rps),
      facetsVsListUncached: ratio(ours.facets.rps, ours.listUncached.rps),
      pagingVsJsonServer: ratio(ours.paging.pagesPerSecond, jsonServer.paging.pagesPerSecond),
      detailVsHello: ratio(ours.detail.rps, hello.rps),
      detailVsJsonServer: ratio(ours.detail.rps, jsonServer.detail.rps),
      createVsCreateAt1k: ratio(ours.create.rps, create1k),
      createVsJsonServerSameSize: ratio(ours.create.rps, jsonServer.create.rps),
      createVsJsonServerAt10k: ratio(ours.create.rps, jsonCreate10k),
      updateVsJsonServer: ratio(ours.update.rps, jsonServer.update.rps),
    };
    const at = (size: number, pass: boolean) => (SIZE === size ? pass : null);
    const targets: Record<string, boolean | null> = {
      'list, every URL new, at 10k >= 30% of hello-world': at(
        10000,
        (ratios.listUncachedVsHello ?? 0) >= 0.3,
      ),
      'list, every URL new, at 100k >= 0.6x its ratio at 10k':
        SIZE === 100000 && ratios.listUncachedVsListUncachedAt10k !== null
          ? ratios.listUncachedVsListUncachedAt10k >= 0.6
          : null,
      '95/5 mixed at 100k >= 0.5x the list, every URL new': at(
        100000,
        (ratios.mixedVsListUncached ?? 0) >= 0.5,
      ),
      '95/5 mixed at 100k: p99 <= 5x p50': at(100000, (ratios.mixedP99VsP50 ?? Infinity) <= 5),
      'search (q) at 100k >= 0.5x the list, every URL new': at(
        100000,
        (ratios.searchVsListUncached ?? 0) >= 0.5,
      ),
      'facets at 100k >= 0.5x the list, every URL new': at(
        100000,
        (ratios.facetsVsListUncached ?? 0) >= 0.5,
      ),
      'cold start at 100k <= 1.5 s to the first list': at(
        100000,
        ours.coldStart.firstListMs <= 1500,
      ),
      'detail >= 40% of hello-world': (ratios.detailVsHello ?? 0) >= 0.4,
      'create at 100k >= 50% of create at 1k':
        SIZE === 100000 && ratios.createVsCreateAt1k !== null
          ? ratios.createVsCreateAt1k >= 0.5
          : null,
      'create >= 50x json-server create at 10k':
        ratios.createVsJsonServerAt10k !== null ? ratios.createVsJsonServerAt10k >= 50 : null,
    };

    /** Ours with its latencies, the baselines and our ratios to them; hello only where it applies. */
    const row = (
      name: string,
      rate: number,
      latency: { p50: number; p99: number },
      jsonServerRate: number,
      vsJsonServer: number | null,
      vsHello?: number | null,
    ) => {
      const withHello = vsHello !== undefined;
      return [
        name,
        fmt(rate, 0),
        `${latency.p50}/${latency.p99}`,
        withHello ? fmt(hello.rps, 0) : '',
        fmt(jsonServerRate, withHello ? 0 : 1),
        withHello ? fmt(vsHello) : '',
        fmt(vsJsonServer, 1),
      ];
    };
    const rows: string[][] = [
      [
        'measurement',
        'ours',
        'p50/p99 ms',
        'hello',
        'json-server',
        'ours/hello',
        'ours/json-server',
      ],
      row(
        'list, every URL new',
        ours.listUncached.rps,
        ours.listUncached,
        jsonServer.list.rps,
        ratios.listUncachedVsJsonServer,
        ratios.listUncachedVsHello,
      ),
      row(
        '95% lists + 5% updates',
        ours.mixed.rps,
        ours.mixed,
        jsonServer.list.rps,
        ratio(ours.mixed.rps, jsonServer.list.rps),
        ratios.mixedVsHello,
      ),
      row(
        'search (q), every URL new',
        ours.search.rps,
        ours.search,
        jsonServer.list.rps,
        ratio(ours.search.rps, jsonServer.list.rps),
        ratios.searchVsHello,
      ),
      row(
        'list, same URL (cached)',
        ours.list.rps,
        ours.list,
        jsonServer.list.rps,
        ratios.listVsJsonServer,
        ratios.listVsHello,
      ),
      row(
        'paging (pages/s)',
        ours.paging.pagesPerSecond,
        ours.paging,
        jsonServer.paging.pagesPerSecond,
        ratios.pagingVsJsonServer,
      ),
      row(
        'detail (req/s)',
        ours.detail.rps,
        ours.detail,
        jsonServer.detail.rps,
        ratios.detailVsJsonServer,
        ratios.detailVsHello,
      ),
      row(
        'update (req/s)',
        ours.update.rps,
        ours.update,
        jsonServer.update.rps,
        ratios.updateVsJsonServer,
      ),
      row(
        'create (req/s)',
        ours.create.rps,
        ours.create,
        jsonServer.create.rps,
        ratios.createVsJsonServerSameSize,
      ),
    ];
    const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
    console.log(`\nResults at ${SIZE} portfolios`);
    for (const row of rows)
      console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  '));
    console.log(
      `\ncreate vs create at 1k: ${fmt(ratios.createVsCreateAt1k)}; create vs json-server create at 10k: ${fmt(ratios.createVsJsonServerAt10k, 1)}x`,
    );
    console.log(
      `cold start: ${ours.coldStart.firstListMs.toFixed(0)} ms to the first list (listening at ${ours.coldStart.listeningMs.toFixed(0)} ms); ` +
        `RSS ${fmt(ours.memory.idleRssMb, 0)} MB idle, ${fmt(ours.memory.builtRssMb, 0)} MB with every kind's index built, ${fmt(ours.memory.peakRssMb, 0)} MB peak`,
    );
    console.log(
      `hello-world baseline: ${fmt(hello.before.rps, 0)} req/s before the list rows, ${fmt(hello.after.rps, 0)} after the search row ` +
        `(spread ${fmt(100 * hello.spread, 0)} %); the ratios use their median, ${fmt(hello.rps, 0)} req/s`,
    );
    console.log(
      `first request of each kind (ms): ${Object.entries(ours.coldStart.firstOfEachKindMs)
        .map(([kind, ms]) => `${kind} ${ms}`)
        .join('; ')}`,
    );
    const { GET: mixedLists, PUT: mixedUpdates } = ours.mixed.byMethod ?? {};
    console.log(
      `list floor: ${ours.listFloor.urls} list URLs' answers (${ours.listFloor.meanBodyBytes} bytes on average) from a bare Fastify route: ` +
        `${fmt(ours.listFloor.floor.rps, 0)} req/s, ${fmt(ratios.listFloorVsHello)} of hello-world; ours on the same URLs ${fmt(ours.listFloor.ours.rps, 0)} req/s, ` +
        `${fmt(ratios.listVsListFloor)} of that floor`,
    );
    console.log(
      `95/5 mixed: lists p50/p99 ${mixedLists?.p50}/${mixedLists?.p99} ms (${fmt(ratios.mixedListsP99VsP50, 1)}), ` +
        `updates ${mixedUpdates?.p50}/${mixedUpdates?.p99} ms; fdatasync idle p50/p99 ${ours.fdatasync.p50}/${ours.fdatasync.p99} ms`,
    );
    console.log(
      `95/5 mixed vs list: ${fmt(ratios.mixedVsListUncached)} (p99/p50 ${fmt(ratios.mixedP99VsP50, 1)}); ` +
        `search vs list: ${fmt(ratios.searchVsListUncached)}; list/hello vs its 10k ratio: ${fmt(ratios.listUncachedVsListUncachedAt10k)}`,
    );
    if (postgres) {
      const kinds = [
        ['list, every URL new', 'listUncached'],
        ['95% lists + 5% updates', 'mixed'],
        ['search (q), every URL new', 'search'],
        ['list, same URL (cached)', 'list'],
        ['detail', 'detail'],
        ['update', 'update'],
        ['create (durable)', 'create'],
      ] as const;
      const table = [
        ['req/s', 'embedded', 'p50/p99 ms', 'postgres', 'p50/p99 ms', 'postgres/embedded'],
        ...kinds.map(([name, key]) => [
          name,
          fmt(ours[key].rps, 0),
          `${ours[key].p50}/${ours[key].p99}`,
          fmt(postgres[key].rps, 0),
          `${postgres[key].p50}/${postgres[key].p99}`,
          fmt(ratio(postgres[key].rps, ours[key].rps)),
        ]),
      ];
      const widths = table[0]!.map((_, column) =>
        Math.max(...table.map((line) => line[column]!.length)),
      );
      console.log(`\nBoth backends at ${SIZE} portfolios, same run`);
      for (const line of table)
        console.log(line.map((cell, column) => cell.padEnd(widths[column]!)).join('  '));
      console.log(
        `PostgreSQL: seeded in ${postgres.seedSeconds.toFixed(1)} s; cold start ${postgres.coldStart.firstListMs.toFixed(0)} ms to the first list; ` +
          `first request of each kind (ms): ${Object.entries(postgres.coldStart.firstOfEachKindMs)
            .map(([kind, ms]) => `${kind} ${ms}`)
            .join('; ')}`,
      );
      const at100k = (pass: boolean) => (SIZE === 100000 ? pass : null);
      targets['PostgreSQL at 100k: list, every URL new >= 0.5x embedded'] = at100k(
        postgres.listUncached.rps >= 0.5 * ours.listUncached.rps,
      );
      targets['PostgreSQL at 100k: durable create >= 0.5x embedded'] = at100k(
        postgres.settings.synchronousCommit === 'on' &&
          postgres.create.rps >= 0.5 * ours.create.rps,
      );
    }
    console.log('\nTargets (issues 3, 14 and 15):');
    for (const [name, pass] of Object.entries(targets))
      console.log(`  ${pass === null ? 'n/a ' : pass ? 'PASS' : 'FAIL'}  ${name}`);

    const date = new Date().toISOString().slice(0, 10);
    await mkdir(RESULTS_DIR, { recursive: true });
    const file = join(RESULTS_DIR, `${date}-${SIZE}${postgres ? '-postgres' : ''}.json`);
    const machine = {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? '',
      node: process.version,
    };
    const settings = {
      size: SIZE,
      durationSeconds: DURATION,
      connections: CONNECTIONS,
      pageSize: PAGE,
    };
    await writeFile(
      file,
      `${JSON.stringify({ date: new Date().toISOString(), machine, settings, ours, postgres, hello, jsonServer, ratios, targets }, null, 2)}\n`,
    );
    console.log(`\nwrote ${file}`);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }

  if (!args['no-upload'] && existsSync(join(ROOT, 'bench', 'upload.ts'))) {
    console.log('\nUpload bench (bench/upload.ts):');
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'bench/upload.ts'], {
        cwd: ROOT,
        stdio: 'inherit',
        env: { ...process.env, PORTFOLIO_BENCH_SERVER_BUILT: '1' },
      });
      child.once('exit', (code) =>
        code === 0 ? resolve() : reject(new Error(`bench/upload.ts exited ${code}`)),
      );
    });
  }
}

await main();
