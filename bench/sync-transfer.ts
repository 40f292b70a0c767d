/**
 * Where the initial sync's time goes, and builds compared in one run (issue 16, target (b)).
 *
 *   npx tsx bench/sync-transfer.ts --hub-dir /tmp/hub [--portfolios 10000] [--megabytes 1000]
 *       [--builds out-base,out] [--repeats 3] [--only download|sync] [--variants a,b]
 *       [--cpu-prof DIR]
 *
 * The hub data directory is seeded once (10k portfolios, 5 MB JPEG covers) and kept, so runs
 * after the first start at once. Then, interleaved (A B A B …, so every variant sees the same
 * machine):
 * - download: the hub's blobs fetched by this process, 6 at a time, with `fetch` or `node:http`,
 *   into memory or as the replica does (hashed, written, fsync'd), and the feed pages alone;
 * - sync: a whole initial sync by an empty replica of each build in `--builds` (directories
 *   under the repository, so that node_modules resolve, holding `server/cli.js`: `out` is the
 *   current code, built at start; copy it to `out-base` before a change to compare), timed as
 *   bench/sync.ts times it, with the CPU time of both processes (from /proc) beside the wall
 *   time. `--cpu-prof DIR` profiles the replica (and the hub, in DIR/hub).
 */
import { createHash } from 'node:crypto';
import { request as httpRequest, Agent } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, open, rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { makePortfolios, seedDataDir } from './seed';
import {
  ADMIN,
  buildServer,
  ROOT,
  SERVE_COMMAND,
  signIn,
  startOurs,
  startProcess,
  type Server,
} from './server-process';
import { makeJpegs, rawBody } from './upload';

const { values: args } = parseArgs({
  options: {
    'hub-dir': { type: 'string', default: '/tmp/bench-sync-transfer-hub' },
    portfolios: { type: 'string', default: '10000' },
    megabytes: { type: 'string', default: '1000' },
    builds: { type: 'string', default: 'out' },
    repeats: { type: 'string', default: '3' },
    only: { type: 'string' },
    variants: { type: 'string' },
    'cpu-prof': { type: 'string' },
  },
});
const PORTFOLIOS = Number(args.portfolios);
const IMAGES = Math.ceil(Number(args.megabytes) / 5);
const REPEATS = Number(args.repeats);
const CONCURRENCY = 6;
const runs = (part: string) => !args.only || args.only === part;

/** user + system CPU of a process, in ms (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function seedHub(dir: string): Promise<void> {
  if (existsSync(join(dir, '.seeded'))) return;
  await rm(dir, { recursive: true, force: true });
  const records = makePortfolios(PORTFOLIOS);
  await seedDataDir(dir, records);
  const server = await startOurs(dir);
  try {
    const session = await signIn(server.url);
    const images = await makeJpegs(IMAGES);
    for (const [index, image] of images.entries()) {
      const response = await fetch(
        `${server.url}/api/v1/portfolio/${records[index]!.portfolioId}/cover`,
        {
          method: 'PUT',
          headers: { authorization: session, ...rawBody(image, `cover-${index}.jpg`).headers },
          body: new Uint8Array(image),
        },
      );
      if (response.status !== 200) throw new Error(`cover upload: ${response.status}`);
    }
  } finally {
    await server.stop();
  }
  await (await open(join(dir, '.seeded'), 'w')).close();
}

/** The sha256 of every blob the hub holds (its blob store's file names). */
async function blobsOf(url: string, session: string): Promise<string[]> {
  const shas = new Set<string>();
  for (let since = 0; ;) {
    const response = await fetch(`${url}/api/v1/changes?since=${since}&limit=1000`, {
      headers: { authorization: session },
    });
    const page = (await response.json()) as {
      changes: { portfolio?: { fileHashes?: Record<string, string> } }[];
      next: number;
      hasMore: boolean;
    };
    for (const change of page.changes) {
      for (const sha of Object.values(change.portfolio?.fileHashes ?? {})) shas.add(sha);
    }
    since = page.next;
    if (!page.hasMore) return [...shas];
  }
}

type Sink = (chunks: AsyncIterable<Uint8Array>, sha: string) => Promise<void>;

const intoMemory: Sink = async (chunks) => {
  for await (const chunk of chunks) void chunk;
};

/** As the replica does: hashed as they arrive, written in 1 MiB writev's, fsync'd once. */
function toDisk(
  dir: string,
  steps: { hash: boolean; write: boolean; fsync: boolean; syncEvery?: number } = {
    hash: true,
    write: true,
    fsync: true,
  },
): Sink {
  return async (chunks, sha) => {
    const hash = createHash('sha256');
    if (!steps.write) {
      for await (const chunk of chunks) if (steps.hash) hash.update(chunk);
      return;
    }
    const file = await open(join(dir, sha), 'w');
    let writing: Promise<unknown> = Promise.resolve();
    let syncing: Promise<unknown> | undefined;
    let unsynced = 0;
    try {
      let batch: Uint8Array[] = [];
      let bytes = 0;
      for await (const chunk of chunks) {
        if (steps.hash) hash.update(chunk);
        batch.push(chunk);
        bytes += chunk.length;
        if (bytes >= 1024 * 1024) {
          const pieces = batch;
          batch = [];
          bytes = 0;
          await writing;
          writing = file.writev(pieces).then(() => {
            unsynced += pieces.reduce((n, p) => n + p.length, 0);
            if (steps.syncEvery && !syncing && unsynced >= steps.syncEvery) {
              unsynced = 0;
              syncing = file.datasync().finally(() => (syncing = undefined));
            }
          });
        }
      }
      await writing;
      if (batch.length) await file.writev(batch);
      await syncing;
      if (steps.fsync) await file.sync();
    } finally {
      await file.close();
    }
    if (steps.hash && hash.digest('hex') !== sha) throw new Error(`hash mismatch ${sha}`);
  };
}

type Getter = (url: string, session: string, sink: Sink, sha: string) => Promise<void>;

const withFetch: Getter = async (url, session, sink, sha) => {
  const response = await fetch(url, { headers: { authorization: session } });
  if (response.status !== 200) throw new Error(`GET ${response.status}`);
  await sink(response.body as unknown as AsyncIterable<Uint8Array>, sha);
};

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
const withHttp: Getter = (url, session, sink, sha) =>
  new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent, headers: { authorization: session } }, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`GET ${response.statusCode}`));
      sink(response, sha).then(resolve, reject);
    });
    req.on('error', reject);
    req.end();
  });

async function downloadAll(hub: Server, session: string, shas: string[], get: Getter, sink: Sink) {
  const queue = [...shas];
  const worker = async () => {
    for (let sha = queue.shift(); sha; sha = queue.shift())
      await get(`${hub.url}/api/v1/blobs/${sha}`, session, sink, sha);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

async function feedAlone(hub: Server, session: string) {
  for (let since = 0; ;) {
    const response = await fetch(`${hub.url}/api/v1/changes?since=${since}&limit=1000`, {
      headers: { authorization: session },
    });
    const page = (await response.json()) as { next: number; hasMore: boolean };
    since = page.next;
    if (!page.hasMore) return;
  }
}

async function benchDownload(hub: Server, session: string, shas: string[]) {
  const dir = join(args['hub-dir'], '..', 'sync-transfer-sink');
  const http = withHttp;
  /** Every blob over node:http into files, with the steps `steps` says. */
  const toFiles = (steps?: Parameters<typeof toDisk>[1]) => (): Promise<void> =>
    downloadAll(hub, session, shas, http, toDisk(dir, steps));
  const all: [string, () => Promise<void>][] = [
    ['feed', () => feedAlone(hub, session)],
    ['fetch-memory', () => downloadAll(hub, session, shas, withFetch, intoMemory)],
    ['http-memory', () => downloadAll(hub, session, shas, http, intoMemory)],
    ['http-hash', toFiles({ hash: true, write: false, fsync: false })],
    ['http-write', toFiles({ hash: false, write: true, fsync: false })],
    ['http-write-fsync', toFiles({ hash: false, write: true, fsync: true })],
    ['fetch-all', () => downloadAll(hub, session, shas, withFetch, toDisk(dir))],
    ['http-all', toFiles()],
    ...[1, 2, 4].map((mib): [string, () => Promise<void>] => [
      `http-all-bg${mib}`,
      toFiles({ hash: true, write: true, fsync: true, syncEvery: mib << 20 }),
    ]),
  ];
  const wanted = args.variants?.split(',');
  const variants = all.filter(([name]) => !wanted || wanted.includes(name));
  const rows = new Map<string, { ms: number; clientCpuMs: number; hubCpuMs: number }[]>(
    variants.map(([name]) => [name, []]),
  );
  for (let repeat = 0; repeat < REPEATS; repeat++) {
    for (const [name, run] of variants) {
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
      const c0 = process.cpuUsage();
      const h0 = cpuMs(hub.child.pid!);
      const t0 = performance.now();
      await run();
      const ms = Math.round(performance.now() - t0);
      const used = process.cpuUsage(c0);
      const row = {
        ms,
        clientCpuMs: Math.round((used.user + used.system) / 1000),
        hubCpuMs: cpuMs(hub.child.pid!) - h0,
      };
      rows.get(name)!.push(row);
      console.log(
        `${name}: ${ms} ms; CPU client ${row.clientCpuMs} ms, hub ${row.hubCpuMs} ms; ` +
          `load ${loadavg()[0]!.toFixed(2)}`,
      );
    }
  }
  await rm(dir, { recursive: true, force: true });
  return Object.fromEntries(rows);
}

async function startReplicaOf(build: string, dataDir: string, hub: Server) {
  const cli = join(build.startsWith('/') ? build : join(ROOT, build), 'server', 'cli.js');
  const command = SERVE_COMMAND.map((word) => (word === 'out/server/cli.js' ? cli : word));
  if (args['cpu-prof']) command.unshift('--cpu-prof', `--cpu-prof-dir=${args['cpu-prof']}`);
  const { child, match, stop } = startProcess(
    [...command, '--port', '0', '--data-dir', dataDir],
    {
      PORTFOLIO_ADMIN_USERNAME: ADMIN.username,
      PORTFOLIO_ADMIN_PASSWORD: ADMIN.password,
      PORTFOLIO_LOG_LEVEL: 'warn',
      PORTFOLIO_SYNC_INTERVAL_S: '0',
    },
    /API: +(http:\/\/\S+)\/api\/v1/,
  );
  const url = (await match)[1]!;
  const session = await signIn(url);
  const response = await fetch(`${url}/api/v1/sync/config`, {
    method: 'PUT',
    headers: { authorization: session, 'content-type': 'application/json' },
    body: JSON.stringify({ hubUrl: hub.url, username: ADMIN.username, password: ADMIN.password }),
  });
  if (!response.ok) throw new Error(`sync config: ${response.status} ${await response.text()}`);
  return { child, url, session, stop };
}

async function benchSync(hub: Server) {
  const builds = args.builds!.split(',');
  const times = new Map<string, number[]>(builds.map((build) => [build, []]));
  for (let repeat = 0; repeat < REPEATS; repeat++) {
    for (const build of builds) {
      const dataDir = join(args['hub-dir'], '..', 'sync-transfer-replica');
      await rm(dataDir, { recursive: true, force: true });
      const replica = await startReplicaOf(build, dataDir, hub);
      try {
        const r0 = cpuMs(replica.child.pid!);
        const h0 = cpuMs(hub.child.pid!);
        const t0 = performance.now();
        const response = await fetch(`${replica.url}/api/v1/sync/run`, {
          method: 'POST',
          headers: { authorization: replica.session },
        });
        const summary = (await response.json()) as { pulled: number; blobsDown: number };
        const ms = performance.now() - t0;
        if (summary.pulled !== PORTFOLIOS || summary.blobsDown !== IMAGES)
          throw new Error(`round: ${JSON.stringify(summary)}`);
        times.get(build)!.push(Math.round(ms));
        console.log(
          `sync with ${build}: ${Math.round(ms)} ms; CPU replica ${cpuMs(replica.child.pid!) - r0} ms, ` +
            `hub ${cpuMs(hub.child.pid!) - h0} ms; load ${loadavg()[0]!.toFixed(2)}`,
        );
      } finally {
        await replica.stop();
        await rm(dataDir, { recursive: true, force: true });
      }
    }
  }
  return Object.fromEntries(times);
}

async function main() {
  buildServer();
  await seedHub(args['hub-dir']!);
  const hubCommand = [...SERVE_COMMAND];
  if (args['cpu-prof'])
    hubCommand.unshift('--cpu-prof', `--cpu-prof-dir=${join(args['cpu-prof'], 'hub')}`);
  const { child, match, stop } = startProcess(
    [...hubCommand, '--port', '0', '--data-dir', args['hub-dir']!],
    {
      PORTFOLIO_ADMIN_USERNAME: ADMIN.username,
      PORTFOLIO_ADMIN_PASSWORD: ADMIN.password,
      PORTFOLIO_LOG_LEVEL: 'warn',
    },
    /API: +(http:\/\/\S+)\/api\/v1/,
  );
  const hub: Server = { child, url: (await match)[1]!, stop };
  try {
    const session = await signIn(hub.url);
    const shas = await blobsOf(hub.url, session);
    console.log(
      `hub: ${shas.length} blobs; load ${loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')}`,
    );
    const results: Record<string, unknown> = {};
    if (runs('download')) results.download = await benchDownload(hub, session, shas);
    if (runs('sync')) results.sync = await benchSync(hub);
    console.log(JSON.stringify(results));
    console.log(
      `load at end ${loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    await stop();
    agent.destroy();
  }
}

await main();
