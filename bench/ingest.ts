/**
 * npm run bench:ingest -- [--mb N]
 *
 * Folder ingest (DESIGN §16, issue 28): `portfolio ingest` of N MB of 5 MB JPEGs (noise made by
 * sharp, so they do not compress; 10 per project folder) into a fresh server against a baseline
 * measured in the same run, hashing (sha256) and reading the metadata (the sniffed type and the
 * image header, as the ingest and the server do) of the same files: ≤ 2×. A second run of the
 * same ingest (its state kept): ≤ 0.1× the first. The server runs as users run it (built,
 * `npm run serve`'s command); the ingest runs in this process. Results go to
 * bench/results/<date>-ingest-<mb>.json.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { runIngest } from '../server/ingest/run-ingest';
import { inspectFile } from '../server/media/inspect-file';
import { HubClient } from '../server/sync/hub-client';
import { buildServer, ROOT, signIn, startOurs } from './server-process';
import { makeJpegs } from './upload';

const { values: args } = parseArgs({ options: { mb: { type: 'string', default: '200' } } });
const MB = Number(args.mb);
const PER_FOLDER = 10;

/** One noise JPEG made by sharp, then a comment segment with `n` after SOI: distinct bytes. */
function variant(base: Buffer, n: number): Buffer {
  const text = Buffer.from(`bench image ${n}`, 'latin1');
  const segment = Buffer.alloc(4);
  segment.writeUInt16BE(0xfffe, 0);
  segment.writeUInt16BE(text.length + 2, 2);
  return Buffer.concat([base.subarray(0, 2), segment, text, base.subarray(2)]);
}

async function hashAndInspect(path: string): Promise<void> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path, { highWaterMark: 1024 * 1024 }), hash);
  hash.digest('hex');
  const handle = await open(path, 'r');
  const { size } = await handle.stat();
  const tail = Buffer.alloc(Math.min(size, 64 * 1024));
  await handle.read(tail, 0, tail.length, size - tail.length);
  await handle.close();
  await inspectFile(path, { size, tail, maxPixels: 50_000_000, clientName: path });
}

const work = await mkdtemp(join(tmpdir(), 'bench-ingest-'));
try {
  const [base] = await makeJpegs(1);
  const count = Math.max(1, Math.round((MB * 1e6) / base!.length));
  const dir = join(work, 'projects');
  const paths: string[] = [];
  for (let n = 0; n < count; n++) {
    const folder = join(dir, `Project ${String(Math.floor(n / PER_FOLDER)).padStart(3, '0')}`);
    await mkdir(folder, { recursive: true });
    const path = join(folder, `${String(n).padStart(4, '0')}.jpg`);
    await writeFile(path, variant(base!, n));
    paths.push(path);
  }
  const bytes = count * base!.length;
  console.log(`${count} JPEGs, ${(bytes / 1e6).toFixed(0)} MB; load ${loadavg()[0]!.toFixed(1)}`);

  let started = performance.now();
  for (const path of paths) await hashAndInspect(path);
  const baselineMs = performance.now() - started;

  buildServer();
  const server = await startOurs(join(work, 'data'));
  try {
    const session = await signIn(server.url);
    const client = new HubClient(server.url, session);
    const ingest = () =>
      runIngest({
        dir,
        client,
        statePath: join(work, 'state.json'),
        defaults: { memberBarcode: 'B0001', category: 'Bench' },
        maxPixels: 50_000_000,
        env: {},
        print: () => {},
        progress: process.stderr,
      });
    started = performance.now();
    const first = await ingest();
    const firstMs = performance.now() - started;
    started = performance.now();
    const second = await ingest();
    const secondMs = performance.now() - started;
    if (first.blobsSent !== count || second.blobsSent !== 0 || second.filesAdded !== 0)
      throw new Error(`unexpected: ${JSON.stringify({ first, second })}`);

    const result = {
      date: new Date().toISOString(),
      files: count,
      megabytes: Number((bytes / 1e6).toFixed(1)),
      load: loadavg()[0],
      baselineMs: Math.round(baselineMs),
      firstMs: Math.round(firstMs),
      secondMs: Math.round(secondMs),
      firstVsBaseline: Number((firstMs / baselineMs).toFixed(2)),
      secondVsFirst: Number((secondMs / firstMs).toFixed(3)),
      targets: { firstVsBaseline: 2, secondVsFirst: 0.1 },
    };
    console.log(JSON.stringify(result, null, 2));
    const out = join(ROOT, 'bench', 'results', `${result.date.slice(0, 10)}-ingest-${MB}.json`);
    await writeFile(out, `${JSON.stringify(result, null, 2)}\n`);
    console.log(`wrote ${out}`);
  } finally {
    await server.stop();
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
