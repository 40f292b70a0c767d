/**
 * npm run bench:transfer -- [--size N] [--image-mb M] [--connections C]
 *
 * The speed scenarios of issue 27 (benchmarks, not timed tests), each against a baseline
 * measured in the same run:
 * - a full backup (`POST /api/v1/backups`, followed in `GET /api/v1/backups`) of N portfolios
 *   and M MB of 5 MB JPEG covers (noise made by sharp: they do not compress) against a durable
 *   copy of the data directory (`cp -r` then `sync`): ≤ 1.5×; an incremental backup after 100
 *   updates: ≤ 5 % of the full one;
 * - the lists' p99 of the 95/5 list/update mix (bench/list-workload.ts) while a full backup runs
 *   (to a new folder, so it copies everything) against the same mix without one: ≤ 2×;
 * - `GET /api/v1/export?format=zip` of the same library, written to a file and fsync'd, against
 *   the durable copy: ≤ 1.5×; the server's RSS growth during it (from /proc, every 20 ms):
 *   ≤ 100 MB;
 * - `POST /api/v1/import` of that ZIP into an empty library on a new server: ≤ 2× the durable
 *   copy.
 * Servers run as users run them (built, `npm run serve`'s command); results go to
 * bench/results/<date>-transfer-<size>.json.
 */
import { spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, readFileSync } from 'node:fs';
import { mkdtemp, open, rm, stat, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { listWorkload, percentiles, sendEach } from './list-workload';
import { makePortfolios, seedDataDir } from './seed';
import { buildServer, ROOT, signIn, startOurs, type Server } from './server-process';
import { makeJpegs, rawBody } from './upload';

const { values: args } = parseArgs({
  options: {
    size: { type: 'string', default: '2000' },
    'image-mb': { type: 'string', default: '200' },
    connections: { type: 'string', default: '10' },
  },
});
const SIZE = Number(args.size);
const IMAGE_MB = Number(args['image-mb']);
const CONNECTIONS = Number(args.connections);
const CHANGES = 100;

type Json = Record<string, unknown>;

async function call(url: string, session: string, method: string, path: string, body?: unknown) {
  const response = await fetch(url + path, {
    method,
    headers: {
      authorization: session,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
  return { status: response.status, body: (text ? JSON.parse(text) : {}) as Json };
}

/** Runs a command; answers its wall time in ms. */
function run(command: string, commandArgs: string[]): number {
  const started = performance.now();
  const result = spawnSync(command, commandArgs, { stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`${command} failed: ${result.status}`);
  return performance.now() - started;
}

/** The baseline: `cp -r` of the data directory, then `sync` (a `sync` first, not counted). */
async function durableCopy(from: string, to: string): Promise<number> {
  run('sync', []);
  const ms = run('cp', ['-r', from, to]) + run('sync', []);
  await rm(to, { recursive: true, force: true });
  return ms;
}

function du(path: string): number {
  const out = spawnSync('du', ['-sb', path], { encoding: 'utf8' }).stdout;
  return Number(out.split(/\s/)[0]);
}

const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** Starts a backup and waits until it is done; answers its time and its entry. */
async function backup(url: string, session: string) {
  run('sync', []);
  const started = performance.now();
  const { status, body } = await call(url, session, 'POST', '/api/v1/backups');
  let entry = body;
  if (status === 202) {
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      const list = (await call(url, session, 'GET', '/api/v1/backups')).body as {
        backups: Json[];
      };
      entry = list.backups.find((one) => one.backupId === body.backupId)!;
      if (entry.status === 'done') break;
      if (entry.status === 'failed') throw new Error(`backup failed: ${String(entry.error)}`);
    }
  }
  const ms = performance.now() - started;
  return { ms: Math.round(ms), sizeBytes: entry.sizeBytes as number, seq: entry.seq as number };
}

/**
 * The 95/5 mix for `seconds`, the lists' latencies recorded with the moment each answer came.
 * With `during`, that starts 1 s into the load and the load stops 1 s after it ended (however
 * long it takes); only the lists answered while it ran count.
 */
async function mix(
  server: { url: string; session: string },
  records: ReturnType<typeof makePortfolios>,
  seed: number,
  seconds: number,
  during?: () => Promise<unknown>,
) {
  const workload = listWorkload(records, seed);
  const answers: { at: number; ms: number; method: string }[] = [];
  const instance = autocannon({
    url: server.url,
    connections: CONNECTIONS,
    duration: during ? 600 : seconds,
    headers: { authorization: server.session },
    requests: sendEach(workload.mixed),
  });
  instance.on('response', (client, _status, _bytes, ms) => {
    const sent = (client as { requestIterator: { currentRequest: { requestBuffer: Buffer } } })
      .requestIterator.currentRequest.requestBuffer;
    answers.push({
      at: performance.now(),
      ms,
      method: sent.subarray(0, sent.indexOf(32)).toString(),
    });
  });
  let window: { from: number; to: number } | undefined;
  const side = during
    ? (async () => {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const from = performance.now();
        try {
          const result = await during();
          window = { from, to: performance.now() };
          await new Promise((resolve) => setTimeout(resolve, 1000));
          return result;
        } finally {
          instance.stop();
        }
      })()
    : undefined;
  const [result, sideResult] = await Promise.all([instance, side]);
  const lists = answers.filter(
    (answer) =>
      answer.method === 'GET' && (!window || (answer.at >= window.from && answer.at <= window.to)),
  );
  return {
    rps: Math.round(result.requests.average),
    non2xx: result.non2xx,
    errors: result.errors,
    lists: percentiles(lists.map((answer) => answer.ms)),
    updates: percentiles(
      answers.filter((answer) => answer.method === 'PUT').map((answer) => answer.ms),
    ),
    sideResult,
  };
}

/** GET /api/v1/export?format=zip to `file`, fsync'd; the server's RSS sampled meanwhile. */
async function exportZip(server: Server, session: string, file: string) {
  const pid = server.child.pid!;
  const before = rssMb(pid);
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 20);
  run('sync', []);
  const started = performance.now();
  try {
    const response = await fetch(`${server.url}/api/v1/export?format=zip`, {
      headers: { authorization: session },
    });
    if (!response.ok) throw new Error(`export: ${response.status} ${await response.text()}`);
    await pipeline(Readable.fromWeb(response.body! as NodeReadableStream), createWriteStream(file));
    const handle = await open(file, 'r');
    await handle.sync();
    await handle.close();
  } finally {
    clearInterval(sampler);
  }
  const ms = performance.now() - started;
  peak = Math.max(peak, rssMb(pid));
  return {
    ms: Math.round(ms),
    bytes: (await stat(file)).size,
    rssBeforeMb: Math.round(before),
    rssPeakMb: Math.round(peak),
    rssGrowthMb: Math.round(peak - before),
  };
}

/** POST /api/v1/import of `file` as the raw body; answers its time once the server answered. */
async function importZip(url: string, session: string, file: string) {
  const size = (await stat(file)).size;
  run('sync', []);
  const started = performance.now();
  const { status, body } = await new Promise<{ status: number; body: string }>(
    (resolve, reject) => {
      const req = request(
        `${url}/api/v1/import`,
        {
          method: 'POST',
          headers: {
            authorization: session,
            'content-type': 'application/zip',
            'content-length': size,
          },
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve({ status: response.statusCode!, body: text }));
          response.on('error', reject);
        },
      );
      req.on('error', reject);
      createReadStream(file).pipe(req);
    },
  );
  const ms = performance.now() - started;
  if (status !== 200) throw new Error(`import: ${status} ${body.slice(0, 300)}`);
  return { ms: Math.round(ms), report: JSON.parse(body) as Json };
}

const ratio = (a: number, b: number) => +(a / b).toFixed(2);

async function main() {
  const startLoad = loadavg();
  const work = await mkdtemp(join(tmpdir(), 'bench-transfer-'));
  const dataDir = join(work, 'data');
  const servers: Server[] = [];
  try {
    buildServer();
    const records = makePortfolios(SIZE);
    console.log(`seeding ${SIZE} portfolios…`);
    await seedDataDir(dataDir, records);
    const imageCount = Math.max(1, Math.round(IMAGE_MB / 5));
    console.log(`making ${imageCount} JPEGs of about 5 MB…`);
    const images = await makeJpegs(imageCount);
    // As run.ts: no list answer from the cache of serialized answers (every URL is new anyway).
    const server = await startOurs(dataDir, { PORTFOLIO_LIST_CACHE_MB: '0' });
    servers.push(server);
    const session = await signIn(server.url);
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
    const dataBytes = du(dataDir);
    console.log(`data directory: ${(dataBytes / 1e6).toFixed(0)} MB`);

    const copyBefore = await durableCopy(dataDir, join(work, 'copy'));
    console.log(`durable copy (cp -r + sync): ${copyBefore.toFixed(0)} ms`);

    console.log('full backup…');
    const full = await backup(server.url, session);
    console.log(`  ${full.ms} ms, ${(full.sizeBytes / 1e6).toFixed(0)} MB`);

    console.log(`${CHANGES} updates, then an incremental backup…`);
    for (let n = 0; n < CHANGES; n++) {
      const target = records[Math.floor((n * records.length) / CHANGES)]!;
      await call(server.url, session, 'PUT', `/api/v1/portfolio/${target.portfolioId}`, {
        memberBarcode: target.memberBarcode,
        category: target.category,
        projectTitle: `${target.projectTitle} changed`,
        projectDetail: target.projectDetail,
      });
    }
    const incremental = await backup(server.url, session);
    console.log(`  ${incremental.ms} ms`);

    // The mix, without and then during a full backup (a new folder: nothing to share).
    const seconds = Math.max(10, Math.ceil((full.ms * 2) / 1000) + 2);
    const target = { url: server.url, session };
    console.log(`warm-up, not counted…`);
    await mix(target, records, 99, 3);
    console.log(`95/5 mix without a backup (${seconds} s)…`);
    const quiet = await mix(target, records, 7, seconds);
    console.log(`  lists p50/p99 ${quiet.lists.p50}/${quiet.lists.p99} ms, ${quiet.rps} req/s`);
    const settings = (await call(server.url, session, 'GET', '/api/v1/backups/settings')).body;
    await call(server.url, session, 'PUT', '/api/v1/backups/settings', {
      ...settings,
      target: join(work, 'backups-under-load'),
    });
    console.log(`95/5 mix during a full backup…`);
    const loaded = await mix(target, records, 8, seconds, () => backup(server.url, session));
    const loadedBackup = loaded.sideResult as Awaited<ReturnType<typeof backup>>;
    console.log(
      `  lists p50/p99 ${loaded.lists.p50}/${loaded.lists.p99} ms over the backup's ` +
        `${loadedBackup.ms} ms (${loaded.lists.count} lists), ${loaded.rps} req/s`,
    );

    console.log('export (ZIP)…');
    const zip = join(work, 'library.zip');
    const exported = await exportZip(server, session, zip);
    console.log(
      `  ${exported.ms} ms, ${(exported.bytes / 1e6).toFixed(0)} MB, RSS ` +
        `${exported.rssBeforeMb} → ${exported.rssPeakMb} MB`,
    );
    await server.stop();

    const copyAfter = await durableCopy(dataDir, join(work, 'copy'));
    console.log(`durable copy again: ${copyAfter.toFixed(0)} ms`);
    const copyMs = Math.round((copyBefore + copyAfter) / 2);

    console.log('import into an empty library…');
    const empty = await startOurs(join(work, 'empty'));
    servers.push(empty);
    const imported = await importZip(empty.url, await signIn(empty.url), zip);
    console.log(`  ${imported.ms} ms`);
    await empty.stop();

    const results = {
      date: new Date().toISOString(),
      size: SIZE,
      images: imageCount,
      imageMb: IMAGE_MB,
      dataDirBytes: dataBytes,
      connections: CONNECTIONS,
      loadavg: { start: startLoad, end: loadavg() },
      durableCopyMs: { before: Math.round(copyBefore), after: Math.round(copyAfter), mean: copyMs },
      fullBackup: full,
      incrementalBackup: incremental,
      mixWithoutBackup: { seconds, ...quiet, sideResult: undefined },
      mixDuringBackup: { ...loaded, sideResult: undefined, backup: loadedBackup },
      export: exported,
      import: { ms: imported.ms },
      ratios: {
        fullBackupVsDurableCopy: ratio(full.ms, copyMs),
        incrementalVsFull: ratio(incremental.ms, full.ms),
        listP99DuringBackup: ratio(loaded.lists.p99, quiet.lists.p99),
        exportVsDurableCopy: ratio(exported.ms, copyMs),
        importVsDurableCopy: ratio(imported.ms, copyMs),
      },
      targets: {} as Record<string, boolean>,
    };
    results.targets = {
      'full backup <= 1.5x durable copy': results.ratios.fullBackupVsDurableCopy <= 1.5,
      'incremental backup <= 5% of full': results.ratios.incrementalVsFull <= 0.05,
      'list p99 during a backup <= 2x without': results.ratios.listP99DuringBackup <= 2,
      'export <= 1.5x durable copy': results.ratios.exportVsDurableCopy <= 1.5,
      'export RSS growth <= 100 MB': exported.rssGrowthMb <= 100,
      'import <= 2x durable copy': results.ratios.importVsDurableCopy <= 2,
    };
    console.log(JSON.stringify(results.ratios, null, 2));
    for (const [name, pass] of Object.entries(results.targets))
      console.log(`${pass ? 'met    ' : 'NOT met'}  ${name}`);
    const out = join(
      ROOT,
      'bench',
      'results',
      `${results.date.slice(0, 10)}-transfer-${SIZE}.json`,
    );
    await writeFile(out, `${JSON.stringify(results, null, 2)}\n`);
    console.log(`wrote ${out}`);
  } finally {
    for (const server of servers) await server.stop();
    await rm(work, { recursive: true, force: true });
  }
}

await main();
