/**
 * npm run bench:sync -- [--quick] [--portfolios N] [--megabytes M] [--incremental-large N]
 *                       [--rounds R] [--only upload|initial|incremental]
 *
 * The speed targets of issue 16, each against a floor measured in the same run:
 * (a) upload: a 5 MB JPEG (made by sharp) sent raw (the file as the body) to the real server,
 *     against hashing it (md5 + sha256) and reading its sharp metadata in this process alone:
 *     ≤ 1.5×. Multipart is measured beside it, for comparison.
 * (b) initial sync: a hub with N portfolios and M MB of 5 MB images (covers of the first ones),
 *     pulled by an empty replica over loopback, against `cp -r` of the hub's data directory:
 *     ≤ 3×. Also against `cp -r` then `sync` (a durable copy, which a sync must make). The files
 *     are in the page cache for both sides (nothing drops it). Defaults: the issue's 10k
 *     portfolios and 1 GB (200 images of 5 MB); `--quick`: 1000 portfolios, 200 MB, and the
 *     incremental round at 10k instead of 100k.
 * (c) an incremental round (100 changes made on the hub, pulled by the replica) at
 *     `--incremental-large` portfolios against the same round at 1000: ≤ 2×.
 * Servers run as users run them (built, `npm run serve`'s command), hub and replica each its own
 * process; results go to bench/results/<date>-sync.json.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, open, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { makePortfolios, seedDataDir } from './seed';
import { ADMIN, buildServer, signIn, startOurs, type Server } from './server-process';
import { floor, makeJpegs, median, multipartBody, p90, rawBody, startClient } from './upload';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    portfolios: { type: 'string' },
    megabytes: { type: 'string' },
    'incremental-large': { type: 'string' },
    rounds: { type: 'string', default: '16' },
    only: { type: 'string' },
  },
});
const PORTFOLIOS = Number(args.portfolios ?? (args.quick ? 1000 : 10_000));
const MEGABYTES = Number(args.megabytes ?? (args.quick ? 200 : 1000));
const INCREMENTAL_LARGE = Number(args['incremental-large'] ?? (args.quick ? 10_000 : 100_000));
const ROUNDS = Number(args.rounds);
const WARMUP = 4;
const IMAGE_MB = 5;
const CHANGES = 100;
/** Timed incremental rounds per size (the median is reported). */
const REPEATS = 5;
/** Blobs the replica downloads at a time (server/sync/replica.ts). */
const BLOB_DOWNLOADS = 6;
const runs = (part: string) => !args.only || args.only === part;

type Json = Record<string, unknown>;

/** One JSON request to a server; throws on anything but 2xx. */
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
  return (text ? JSON.parse(text) : {}) as Json;
}

// ---------------------------------------------------------------- (a) upload

/**
 * The floor of a durable upload, for context beside the floor (hash + metadata): the same
 * work plus writing the bytes to a new file on the server's disk and fsyncing it, as any upload
 * that is on disk before it is acknowledged must.
 */
async function durableFloor(bytes: Buffer, dir: string): Promise<void> {
  await floor(bytes);
  const path = join(dir, `durable-floor-${process.hrtime.bigint()}`);
  const handle = await open(path, 'wx');
  try {
    await handle.write(bytes);
    await handle.sync();
  } finally {
    await handle.close();
    await rm(path, { force: true });
  }
}

async function benchUpload(jpegs: Buffer[], work: string) {
  const rounds = jpegs.length / 2;
  const server = await startOurs(join(work, 'upload-data'));
  let client: Awaited<ReturnType<typeof startClient>> | undefined;
  try {
    const session = await signIn(server.url);
    const { portfolioId } = await call(server.url, session, 'POST', '/api/v1/portfolio', {
      memberBarcode: 'B1',
      category: 'Bench',
      projectTitle: 'Bench',
      projectDetail: 'Bench',
    });
    // Even bodies raw, odd ones multipart: each a different JPEG, so each upload is a new blob.
    const bodies = await Promise.all(
      jpegs.map(async (jpeg, index) => {
        const body = (index % 2 ? multipartBody : rawBody)(jpeg, `photo-${index}.jpg`);
        const path = join(work, `body-${index}`);
        await writeFile(path, body.bytes);
        return { path, headers: body.headers };
      }),
    );
    client = await startClient({
      url: `${server.url}/api/v1/portfolio/${String(portfolioId)}/cover`,
      session,
      bodies,
    });
    const times = {
      floor: [] as number[],
      durableFloor: [] as number[],
      raw: [] as number[],
      multipart: [] as number[],
    };
    for (let round = 0; round < rounds; round++) {
      // Interleaved, so all three see the same machine state.
      for (const [index, kind] of [
        [2 * round, 'raw'],
        [2 * round + 1, 'multipart'],
      ] as const) {
        const t0 = performance.now();
        await floor(jpegs[index]!);
        const floorMs = performance.now() - t0;
        const t1 = performance.now();
        await durableFloor(jpegs[index]!, work);
        const durableFloorMs = performance.now() - t1;
        const { status, ms } = await client.upload(index);
        if (status !== 200) throw new Error(`${kind} upload failed: ${status}`);
        if (round < WARMUP) continue;
        times.floor.push(floorMs);
        times.durableFloor.push(durableFloorMs);
        times[kind].push(ms);
      }
    }
    const floorMs = median(times.floor);
    const durableFloorMs = median(times.durableFloor);
    const rawMs = median(times.raw);
    const multipartMs = median(times.multipart);
    return {
      bytes: Math.round(jpegs.reduce((sum, jpeg) => sum + jpeg.length, 0) / jpegs.length),
      rounds: rounds - WARMUP,
      rawMedianMs: +rawMs.toFixed(2),
      rawP90Ms: +p90(times.raw).toFixed(2),
      multipartMedianMs: +multipartMs.toFixed(2),
      multipartP90Ms: +p90(times.multipart).toFixed(2),
      hashAndMetadataMedianMs: +floorMs.toFixed(2),
      hashMetadataAndDurableWriteMedianMs: +durableFloorMs.toFixed(2),
      rawVsDurableFloor: +(rawMs / durableFloorMs).toFixed(2),
      rawRatio: +(rawMs / floorMs).toFixed(2),
      multipartRatio: +(multipartMs / floorMs).toFixed(2),
      target: 1.5,
      pass: rawMs / floorMs <= 1.5,
    };
  } finally {
    client?.stop();
    await server.stop();
  }
}

// ---------------------------------------------------------------- hub and replica

interface Hub extends Server {
  dataDir: string;
  session: string;
}

/** A hub with `portfolios` seeded portfolios, the first `images.length` with an image cover. */
async function startHub(dataDir: string, portfolios: number, images: Buffer[]): Promise<Hub> {
  const records = makePortfolios(portfolios);
  await seedDataDir(dataDir, records);
  const server = await startOurs(dataDir);
  const session = await signIn(server.url);
  for (const [index, image] of images.entries()) {
    const response = await fetch(
      `${server.url}/api/v1/portfolio/${records[index]!.portfolioId}/cover`,
      {
        method: 'PUT',
        headers: {
          authorization: session,
          ...rawBody(image, `cover-${index}.jpg`).headers,
        },
        body: new Uint8Array(image),
      },
    );
    if (response.status !== 200) throw new Error(`hub cover upload: ${response.status}`);
  }
  return { ...server, dataDir, session };
}

interface Replica extends Server {
  session: string;
}

/**
 * An empty replica of `hub`, configured through the control API; answers null when this build
 * has no replica engine (no `PUT /api/v1/sync/config`).
 */
async function startReplica(dataDir: string, hub: Hub): Promise<Replica | null> {
  // Background rounds would race the measured ones: this bench runs every round itself.
  const server = await startOurs(dataDir, { PORTFOLIO_SYNC_INTERVAL_S: '0' });
  const session = await signIn(server.url);
  const response = await fetch(`${server.url}/api/v1/sync/config`, {
    method: 'PUT',
    headers: { authorization: session, 'content-type': 'application/json' },
    body: JSON.stringify({ hubUrl: hub.url, username: ADMIN.username, password: ADMIN.password }),
  });
  if (response.status === 404 && ((await response.json()) as Json).code === 'ROUTE_NOT_FOUND') {
    await server.stop();
    return null;
  }
  if (!response.ok) throw new Error(`sync config: ${response.status} ${await response.text()}`);
  return { ...server, session };
}

interface RoundSummary {
  pulled: number;
  pushed: number;
  blobsDown: number;
  bytesDown: number;
  durationMs: number;
}

/** Rounds until one pulls nothing new; answers their sum and the wall time of all of them. */
async function syncUntilCurrent(replica: Replica, expectPulled: number) {
  const total = { pulled: 0, blobsDown: 0, bytesDown: 0, rounds: 0 };
  const t0 = performance.now();
  for (;;) {
    const summary = (await call(
      replica.url,
      replica.session,
      'POST',
      '/api/v1/sync/run',
    )) as unknown as RoundSummary;
    total.rounds++;
    total.pulled += summary.pulled;
    total.blobsDown += summary.blobsDown;
    total.bytesDown += summary.bytesDown;
    if (summary.pulled === 0 || total.pulled >= expectPulled) break;
  }
  return { ...total, ms: performance.now() - t0 };
}

async function portfolioTotal(server: Server, session: string): Promise<number> {
  const page = await call(server.url, session, 'GET', '/api/v1/portfolio?pageSize=1');
  return Number(page.total);
}

function run(command: string, args: string[]): number {
  const t0 = performance.now();
  const result = spawnSync(command, args);
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr.toString()}`);
  return performance.now() - t0;
}

/**
 * `cp -r` of `from` to `to` (and then `sync`, when `durable`: the copy on disk, as a sync must
 * leave it); answers the time and the bytes copied, and removes the copy (durably) after.
 */
async function copyOf(from: string, to: string, durable: boolean) {
  const ms = run('cp', ['-r', from, to]) + (durable ? run('sync', []) : 0);
  const bytes = await directoryBytes(to);
  await rm(to, { recursive: true, force: true });
  run('sync', []);
  return { ms, bytes };
}

async function directoryBytes(dir: string): Promise<number> {
  let bytes = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) bytes += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return bytes;
}

const NEEDS_REPLICA =
  'skipped: needs the replica engine (PUT /api/v1/sync/config, POST /api/v1/sync/run) of the ' +
  'sync-replica branch, which this build does not have';

// ---------------------------------------------------------------- (b) initial sync

async function benchInitialSync(images: Buffer[], work: string) {
  const hub = await startHub(join(work, 'hub'), PORTFOLIOS, images);
  let replica: Replica | null = null;
  try {
    // Everything the hub wrote is on disk first, so neither baseline pays for the hub's writes.
    run('sync', []);
    const { ms: cpMs, bytes: hubBytes } = await copyOf(hub.dataDir, join(work, 'hub-copy'), false);
    const { ms: cpSyncMs } = await copyOf(hub.dataDir, join(work, 'hub-copy'), true);

    replica = await startReplica(join(work, 'replica'), hub);
    if (!replica) return { skipped: NEEDS_REPLICA };
    const synced = await syncUntilCurrent(replica, PORTFOLIOS);
    // Where the time goes: the blobs alone, read into memory as many at a time as the replica
    // downloads them (no hashing, no writing).
    const t1 = performance.now();
    const queue = images.map((image) => createHash('sha256').update(image).digest('hex'));
    const worker = async () => {
      for (let sha = queue.shift(); sha; sha = queue.shift()) {
        const response = await fetch(`${hub.url}/api/v1/blobs/${sha}`, {
          headers: { authorization: hub.session },
        });
        if (response.status !== 200) throw new Error(`blob download: ${response.status}`);
        await response.arrayBuffer();
      }
    };
    await Promise.all(Array.from({ length: BLOB_DOWNLOADS }, worker));
    const blobDownloadMs = performance.now() - t1;
    const onReplica = await portfolioTotal(replica, replica.session);
    if (onReplica !== PORTFOLIOS) {
      throw new Error(`the replica has ${onReplica} portfolios, the hub ${PORTFOLIOS}`);
    }
    return {
      portfolios: PORTFOLIOS,
      images: images.length,
      hubBytes,
      rounds: synced.rounds,
      blobsDown: synced.blobsDown,
      bytesDown: synced.bytesDown,
      syncMs: Math.round(synced.ms),
      blobDownloadMs: Math.round(blobDownloadMs),
      cpMs: Math.round(cpMs),
      cpSyncMs: Math.round(cpSyncMs),
      ratio: +(synced.ms / cpMs).toFixed(2),
      ratioToDurableCopy: +(synced.ms / cpSyncMs).toFixed(2),
      target: 3,
      pass: synced.ms / cpMs <= 3,
    };
  } finally {
    await replica?.stop();
    await hub.stop();
  }
}

// ---------------------------------------------------------------- (c) incremental round

/**
 * One replica in sync with a hub of `portfolios`; then, `REPEATS` times, 100 hub changes (each
 * to another portfolio, spread over the library) pulled in one round.
 */
async function incrementalRound(portfolios: number, work: string) {
  const dir = join(work, `incremental-${portfolios}`);
  const hub = await startHub(join(dir, 'hub'), portfolios, []);
  let replica: Replica | null = null;
  try {
    replica = await startReplica(join(dir, 'replica'), hub);
    if (!replica) return null;
    await syncUntilCurrent(replica, portfolios);
    const records = makePortfolios(portfolios);
    const times: number[] = [];
    for (let repeat = 0; repeat < REPEATS; repeat++) {
      for (let n = 0; n < CHANGES; n++) {
        const record =
          records[Math.floor(((n + repeat * CHANGES) * portfolios) / (REPEATS * CHANGES))]!;
        await call(hub.url, hub.session, 'PUT', `/api/v1/portfolio/${record.portfolioId}`, {
          memberBarcode: record.memberBarcode,
          category: record.category,
          projectTitle: `${record.projectTitle} (changed ${repeat})`,
          projectDetail: record.projectDetail,
        });
      }
      const round = await syncUntilCurrent(replica, CHANGES);
      if (round.pulled !== CHANGES) throw new Error(`pulled ${round.pulled}, not ${CHANGES}`);
      times.push(round.ms);
    }
    return { portfolios, roundMs: +median(times).toFixed(1), roundsMs: times.map(Math.round) };
  } finally {
    await replica?.stop();
    await hub.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

async function benchIncremental(work: string) {
  const small = await incrementalRound(1000, work);
  if (!small) return { skipped: NEEDS_REPLICA };
  const large = await incrementalRound(INCREMENTAL_LARGE, work);
  const ratio = large!.roundMs / small.roundMs;
  return {
    changes: CHANGES,
    small,
    large,
    ratio: +ratio.toFixed(2),
    target: 2,
    pass: ratio <= 2,
  };
}

// ---------------------------------------------------------------- main

async function main() {
  buildServer();
  const work = await mkdtemp(join(tmpdir(), 'bench-sync-'));
  const results: Json = {
    date: new Date().toISOString(),
    node: process.version,
    loadAverageAtStart: loadavg().map((load) => +load.toFixed(2)),
    args: {
      portfolios: PORTFOLIOS,
      megabytes: MEGABYTES,
      incrementalLarge: INCREMENTAL_LARGE,
      rounds: ROUNDS,
    },
  };
  try {
    const images = Math.ceil(MEGABYTES / IMAGE_MB);
    const needed = Math.max(
      runs('upload') ? 2 * (ROUNDS + WARMUP) : 0,
      runs('initial') ? images : 0,
    );
    console.log(`making ${needed} JPEGs of about ${IMAGE_MB} MB with sharp…`);
    const jpegs = needed > 0 ? await makeJpegs(needed) : [];

    if (runs('upload')) {
      const upload = await benchUpload(jpegs.slice(0, 2 * (ROUNDS + WARMUP)), work);
      results.upload = upload;
      console.log(
        `(a) upload of a ${(upload.bytes / 1024 / 1024).toFixed(1)} MB JPEG: raw ${upload.rawMedianMs} ms ` +
          `(p90 ${upload.rawP90Ms}), multipart ${upload.multipartMedianMs} ms (p90 ${upload.multipartP90Ms}); ` +
          `md5+sha256+sharp metadata alone ${upload.hashAndMetadataMedianMs} ms; raw ${upload.rawRatio}×, ` +
          `multipart ${upload.multipartRatio}× (target raw ≤ 1.5×) ${upload.pass ? 'PASS' : 'FAIL'}; ` +
          `against the same plus a write and fsync of the bytes (${upload.hashMetadataAndDurableWriteMedianMs} ms): raw ${upload.rawVsDurableFloor}×`,
      );
    }
    if (runs('initial')) {
      const initial = await benchInitialSync(jpegs.slice(0, images), work);
      results.initialSync = initial;
      console.log(
        'skipped' in initial
          ? `(b) initial sync ${initial.skipped}`
          : `(b) initial sync of ${initial.portfolios} portfolios and ${initial.images} images ` +
              `(${(initial.hubBytes / 1024 / 1024).toFixed(0)} MB on the hub): ${initial.syncMs} ms in ` +
              `${initial.rounds} round(s), ${initial.blobsDown} blobs (the blobs alone, GET ` +
              `${BLOB_DOWNLOADS} at a time into memory: ${initial.blobDownloadMs} ms); cp -r ` +
              `${initial.cpMs} ms, cp -r + sync ${initial.cpSyncMs} ms; ${initial.ratio}× cp -r ` +
              `(target ≤ 3×) ${initial.pass ? 'PASS' : 'FAIL'}, ${initial.ratioToDurableCopy}× ` +
              'cp -r + sync',
      );
    }
    if (runs('incremental')) {
      const incremental = await benchIncremental(work);
      results.incremental = incremental;
      console.log(
        'skipped' in incremental
          ? `(c) incremental round ${incremental.skipped}`
          : `(c) a round of ${CHANGES} hub changes: ${incremental.large!.roundMs} ms at ` +
              `${incremental.large!.portfolios} portfolios, ${incremental.small.roundMs} ms at 1000; ` +
              `${incremental.ratio}× (target ≤ 2×) ${incremental.pass ? 'PASS' : 'FAIL'}`,
      );
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  results.loadAverageAtEnd = loadavg().map((load) => +load.toFixed(2));
  console.log(
    `load average at start ${String(results.loadAverageAtStart)}, at end ${String(results.loadAverageAtEnd)}`,
  );
  const dir = join(import.meta.dirname, 'results');
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${new Date().toISOString().slice(0, 10)}-sync.json`);
  await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`wrote ${file}`);
}

await main();
