/**
 * npx tsx bench/memory.ts --data-dir DIR [--size 100000] [--semi 64,32,16] [--rounds 2]
 *                         [--seconds 5] [--snapshot FILE] [--no-load]
 *                         [--loads list,mixed,search,update,create]
 *                         [--variants label=path/to/cli.js:semi,...]
 *
 * Where the server's memory goes at scale, measured the way bench/run.ts does (VmRSS and VmHWM of
 * the child from /proc): RSS once the first list is answered (idle), once every kind of list has
 * built its trees (built: the requests of bench/run.ts's firstOfEachKind and its warm-up of every
 * order with every category and staffPick value), and the peak after loads of lists (every URL
 * new), 95/5 lists and updates, searches and updates, with each load's p50 and p99 (and its
 * lists' and updates' apart, `byMethod`) and CPU per request. Each young-generation size given in
 * `--semi` runs the server as `npm run serve` does but with `--max-semi-space-size` and
 * `--min-semi-space-size` set to it; the sizes take turns (A B C A B C ...), so they share the
 * machine's load alike. `--snapshot FILE` writes a heap snapshot of the first server once built
 * (SIGUSR2 with --heapsnapshot-signal). Seeds DIR with bench/seed.ts when it is empty. Build the
 * server first (`npm run build:server`).
 */
import { existsSync } from 'node:fs';
import { cp, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import {
  buildEveryTree,
  CACHED_LIST_PATH,
  latenciesByMethod,
  listWorkload,
  ORDERS,
  sendEach,
  type Request,
} from './list-workload';
import { makePortfolios, seedDataDir } from './seed';
import {
  ADMIN,
  processCpu,
  ROOT,
  SERVE_COMMAND,
  signIn,
  startProcess,
  timed,
} from './server-process';

const { values: args } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    size: { type: 'string', default: '100000' },
    semi: { type: 'string', default: '' },
    variants: { type: 'string' },
    rounds: { type: 'string', default: '1' },
    seconds: { type: 'string', default: '5' },
    snapshot: { type: 'string' },
    'no-load': { type: 'boolean', default: false },
    loads: { type: 'string', default: 'list,mixed,search,update,create' },
  },
});
const dataDir = args['data-dir'];
if (!dataDir) throw new Error('--data-dir is required');
const records = makePortfolios(Number(args.size));
const SECONDS = Number(args.seconds);

async function memoryOf(pid: number) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: Math.round(kb('VmRSS') / 1024), peak: Math.round(kb('VmHWM') / 1024) };
}

/**
 * The serve command with the young generation set to `semi` MB (none given: as it is; `max16`:
 * at most 16 MB, starting small), running the built server `cli` (none given: this checkout's
 * out/server/cli.js).
 */
function commandWith(semi: string, cli = ''): string[] {
  const words = SERVE_COMMAND.filter((word) => !/^--m(ax|in)-semi-space-size=/.test(word));
  const flags =
    semi === ''
      ? SERVE_COMMAND.filter((word) => /^--m(ax|in)-semi-space-size=/.test(word))
      : semi.startsWith('max')
        ? [`--max-semi-space-size=${semi.slice(3)}`]
        : [`--max-semi-space-size=${semi}`, `--min-semi-space-size=${semi}`];
  const command = words.map((word) => (cli !== '' && word.endsWith('cli.js') ? cli : word));
  return [...flags, ...command];
}

/** Each measured server runs on a fresh copy of the seeded directory (updates change it). */
const runDir = `${dataDir}-run`;

async function start(variant: Variant, extra: string[] = [], dir = runDir) {
  const started = performance.now();
  const command = commandWith(variant.semi, variant.cli);
  const { child, match, stop } = startProcess(
    [...extra, ...command, '--port', '0', '--data-dir', dir],
    {
      PORTFOLIO_ADMIN_USERNAME: ADMIN.username,
      PORTFOLIO_ADMIN_PASSWORD: ADMIN.password,
      PORTFOLIO_LOG_LEVEL: 'warn',
      PORTFOLIO_LIST_CACHE_MB: '0',
    },
    /API: +(http:\/\/\S+)\/api\/v1/,
  );
  const url = (await match)[1]!;
  return { child, url, stop, readyMs: performance.now() - started };
}

/** bench/run.ts's first request of each kind, then its warm-up of every order and filter. */
async function buildEveryIndex(url: string, headers: Record<string, string>) {
  const list = (params: Record<string, string>): Request => ({
    method: 'GET',
    path: `/api/v1/portfolio?${new URLSearchParams({ pageSize: '50', field: 'portfolioId,projectTitle,createdTime', ...params })}`,
  });
  const kinds: Request[] = ORDERS.map((orderBy) => list({ orderBy }));
  kinds.push(
    list({ filter: `memberBarcode:${records[0]!.memberBarcode}`, orderBy: 'projectTitle-' }),
    list({ filter: 'staffPick:true', orderBy: 'modifiedTime-' }),
    list({ filter: 'category:Fashion,staffPick:false', orderBy: 'category,projectTitle' }),
    list({ q: 'house' }),
    list({ q: 'ho ga', orderBy: 'relevance' }),
  );
  for (const request of kinds) await timed(url, headers, request);
  await buildEveryTree(url, headers);
}

/** bench/run.ts's create. */
const CREATE_BODY = {
  memberBarcode: 'M000001',
  category: 'Interior',
  projectTitle: 'Bench portfolio',
  projectDetail: 'Created by the benchmark. '.repeat(10),
  generalTag: ['bench'],
};

/**
 * Pause time of the server's garbage collections (from --trace-gc), by kind: what the size of the
 * young generation trades against memory.
 */
class GcPauses {
  totals: Record<string, { count: number; ms: number }> = {};
  private rest = '';

  constructor(stream: NodeJS.ReadableStream) {
    stream.on('data', (chunk: Buffer) => {
      const lines = (this.rest + chunk.toString()).split('\n');
      this.rest = lines.pop()!;
      for (const line of lines) {
        const found = /ms: ([A-Za-z-]+).*? MB, ([\d.]+) \/ [\d.]+ ms/.exec(line);
        if (!found) continue;
        const total = (this.totals[found[1]!] ??= { count: 0, ms: 0 });
        total.count++;
        total.ms += Number(found[2]);
      }
    });
  }

  /** The pauses since the last call. */
  take(): Record<string, { count: number; ms: number }> {
    const taken = this.totals;
    this.totals = {};
    for (const total of Object.values(taken)) total.ms = Math.round(total.ms);
    return taken;
  }
}

async function load(
  gc: GcPauses,
  pid: number,
  url: string,
  headers: Record<string, string>,
  each: () => Omit<Request, 'method'> & { method: 'GET' | 'PUT' | 'POST' },
) {
  const cpuBefore = processCpu(pid).total;
  gc.take();
  const instance = autocannon({
    url,
    connections: 20,
    duration: SECONDS,
    headers,
    requests: sendEach(each),
  });
  const byMethod = latenciesByMethod(instance);
  const result = await instance;
  if (result.non2xx > 0 || result.errors > 0)
    console.log(`    warning: ${result.non2xx} non-2xx, ${result.errors} errors`);
  const cpuMs = processCpu(pid).total - cpuBefore;
  return {
    gc: gc.take(),
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    byMethod: byMethod.take(),
    cpuMsPerRequest: Number((cpuMs / Math.max(1, result.requests.total)).toFixed(3)),
  };
}

interface Variant {
  label: string;
  semi: string;
  cli: string;
}

async function measure(variant: Variant, sessionId: string, snapshot?: string) {
  const headers = { authorization: sessionId };
  await rm(runDir, { recursive: true, force: true });
  await cp(dataDir!, runDir, { recursive: true });
  const started = performance.now();
  const server = await start(variant, [
    '--trace-gc',
    ...(snapshot ? ['--heapsnapshot-signal=SIGUSR2'] : []),
  ]);
  const pid = server.child.pid!;
  const gc = new GcPauses(server.child.stdout!);
  try {
    for (;;) {
      const response = await fetch(server.url + CACHED_LIST_PATH, { headers });
      if (response.ok) {
        await response.arrayBuffer();
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const firstListMs = Math.round(performance.now() - started);
    const idle = await memoryOf(pid);
    await buildEveryIndex(server.url, headers);
    const built = await memoryOf(pid);
    if (snapshot) {
      const before = new Set(await readdir(ROOT));
      process.kill(pid, 'SIGUSR2');
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const made = (await readdir(ROOT)).find(
          (name) => !before.has(name) && name.endsWith('.heapsnapshot'),
        );
        if (made) {
          // Written on the main thread: once a request is answered again, the file is complete.
          await timed(server.url, headers, { method: 'GET', path: CACHED_LIST_PATH });
          await rename(join(ROOT, made), snapshot);
          break;
        }
      }
    }
    const row: Record<string, unknown> = { variant: variant.label, firstListMs, idle, built };
    if (!args['no-load']) {
      const workload = listWorkload(records);
      const loads = {
        list: workload.list,
        mixed: workload.mixed,
        search: workload.search,
        update: workload.update,
        // Last, as in bench/run.ts: creates add thousands of portfolios.
        create: () => ({
          method: 'POST' as const,
          path: '/api/v1/portfolio',
          body: JSON.stringify(CREATE_BODY),
        }),
      };
      for (const name of args.loads.split(','))
        row[name] = await load(gc, pid, server.url, headers, loads[name as keyof typeof loads]);
    }
    row.after = await memoryOf(pid);
    console.log(JSON.stringify(row));
    return row;
  } finally {
    await server.stop();
  }
}

if (!existsSync(join(dataDir, 'db.json'))) {
  console.log(`seeding ${records.length} portfolios into ${dataDir}`);
  await seedDataDir(dataDir, records);
}
// A first start bootstraps the admin; the session outlives restarts.
const first = await start({ label: 'serve', semi: '', cli: '' }, [], dataDir);
const sessionId = await signIn(first.url);
await first.stop();

// --semi 64,32 or --variants label=cli.js:semi,... (another build of the server, e.g. main's).
const variants: Variant[] = args.variants
  ? args.variants.split(',').map((spec) => {
      const [label, rest] = spec.split('=') as [string, string];
      const [cli, semi] = rest.split(':') as [string, string];
      return { label, cli, semi: semi ?? '' };
    })
  : (args.semi === '' ? [''] : args.semi.split(',')).map((semi) => ({
      label: semi || 'serve',
      semi,
      cli: '',
    }));
for (let round = 0; round < Number(args.rounds); round++)
  for (const [index, variant] of variants.entries())
    await measure(variant, sessionId, round === 0 && index === 0 ? args.snapshot : undefined);
await rm(runDir, { recursive: true, force: true });
