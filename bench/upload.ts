/**
 * Upload cost against its floor: a 5 MB JPEG uploaded through the real server over HTTP
 * (multipart, streamed to the blob store, sniffed, inspected, fsync'd, committed), compared with
 * hashing the same bytes (md5 + sha256) and reading their sharp metadata in this process alone.
 * The server runs as users run it (built, with the flags of `npm run serve`) and the client is
 * another process. Each round uploads a different JPEG as the cover, so each
 * upload also replaces (and later removes) the previous one. Target: upload ≤ 1.5× the floor.
 * Run: `npx tsx bench/upload.ts`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { fork } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import sharp from 'sharp';
import { buildServer, signIn, startOurs } from './server-process';

const ROUNDS = 20;
const WARMUP = 4;

/** Distinct JPEGs of about 5 MB (noise compresses poorly, so the size is easy to aim at). */
export async function makeJpegs(count: number): Promise<Buffer[]> {
  const side = 2700; // about 5.3 MB at quality 88
  const jpegs: Buffer[] = [];
  for (let n = 0; n < count; n++) {
    const raw = Buffer.alloc(side * side * 3);
    let seed = 0x9e3779b9 ^ (n * 7919);
    for (let i = 0; i < raw.length; i++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      raw[i] = seed >>> 24;
    }
    jpegs.push(
      await sharp(raw, { raw: { width: side, height: side, channels: 3 } })
        .jpeg({ quality: 88 })
        .toBuffer(),
    );
  }
  return jpegs;
}

export async function floor(bytes: Buffer): Promise<void> {
  createHash('md5').update(bytes).digest('hex');
  createHash('sha256').update(bytes).digest('hex');
  await sharp(bytes).metadata();
}

/** A request body and the headers that say what it is. */
export interface Body {
  headers: Record<string, string>;
  bytes: Buffer;
}

/** The request body is built before timing, so encoding it is not counted as upload cost. */
export function multipartBody(file: Buffer, filename: string): Body {
  const boundary = `----bench${randomBytes(8).toString('hex')}`;
  const head =
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n` +
    'Content-Type: image/jpeg\r\n\r\n';
  return {
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    bytes: Buffer.concat([Buffer.from(head), file, Buffer.from(`\r\n--${boundary}--\r\n`)]),
  };
}

/** The file itself as the body (issue 16): nothing to frame, nothing to parse. */
export function rawBody(file: Buffer, filename: string): Body {
  return {
    headers: {
      'content-type': 'image/jpeg',
      'content-disposition': `attachment; filename="${filename}"`,
    },
    bytes: file,
  };
}

function put(url: string, session: string, body: Body): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'PUT',
        headers: {
          authorization: session,
          ...body.headers,
          'content-length': body.bytes.length,
        },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body.bytes);
  });
}

/** What the client process is told once: where to upload, and the bodies (files) to send. */
export interface ClientSetup {
  url: string;
  session: string;
  bodies: { path: string; headers: Record<string, string> }[];
}

/**
 * The client runs in its own process, as a browser or another program would: sharing the
 * server's event loop would count the client's own sending as server time. It loads every body
 * first, then uploads one per message and answers with its status and the time from the first
 * byte sent to the last byte of the answer.
 */
async function runClient(): Promise<void> {
  let setup: ClientSetup | undefined;
  let bodies: Body[] = [];
  process.on('message', (message: ClientSetup | { index: number }) => {
    void (async () => {
      if ('url' in message) {
        setup = message;
        bodies = await Promise.all(
          message.bodies.map(async ({ path, headers }) => ({
            headers,
            bytes: await readFile(path),
          })),
        );
        process.send!({ ready: true });
        return;
      }
      const t0 = performance.now();
      const status = await put(setup!.url, setup!.session, bodies[message.index]!);
      process.send!({ status, ms: performance.now() - t0 });
    })();
  });
}

/** Starts the client process and hands it its setup; `upload(i)` sends body i. */
export async function startClient(setup: ClientSetup) {
  const child = fork(fileURLToPath(import.meta.url), ['client'], { stdio: 'inherit' });
  let exited: Error | undefined;
  let waiting: ((answer: Error | Record<string, unknown>) => void) | undefined;
  child.on('message', (message: Record<string, unknown>) => waiting?.(message));
  child.on('exit', (code) => {
    exited = new Error(`the upload client exited (${code})`);
    waiting?.(exited);
  });
  /** Sends `message` and waits for the client's answer. */
  const ask = async (message: object) => {
    if (exited) throw exited;
    const answer = await new Promise<Error | Record<string, unknown>>((resolve) => {
      waiting = resolve;
      child.send(message);
    });
    if (answer instanceof Error) throw answer;
    return answer;
  };
  await ask(setup);
  return {
    upload: (index: number) => ask({ index }) as Promise<{ status: number; ms: number }>,
    stop: () => child.kill(),
  };
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** The value below which 90% of `values` lie (nearest rank). */
export const p90 = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.9) - 1]!;

export async function benchUpload() {
  // bench/run.ts has just built it; run alone, this builds it as `npm run serve` would.
  if (!process.env.PORTFOLIO_BENCH_SERVER_BUILT) buildServer();
  const jpegs = await makeJpegs(ROUNDS + WARMUP);
  const work = await mkdtemp(join(tmpdir(), 'bench-upload-'));
  let server: Awaited<ReturnType<typeof startOurs>> | undefined;
  let client: Awaited<ReturnType<typeof startClient>> | undefined;
  try {
    const bodies = await Promise.all(
      jpegs.map(async (jpeg, index) => {
        const { headers, bytes } = multipartBody(jpeg, `photo-${index}.jpg`);
        const path = join(work, `body-${index}`);
        await writeFile(path, bytes);
        return { path, headers };
      }),
    );
    server = await startOurs(join(work, 'data'));
    const url = server.url;
    const sessionId = await signIn(url);
    const created = await fetch(`${url}/api/v1/portfolio`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: sessionId },
      body: JSON.stringify({
        memberBarcode: 'B1',
        category: 'Bench',
        projectTitle: 'Bench',
        projectDetail: 'Bench',
      }),
    });
    const { portfolioId } = (await created.json()) as { portfolioId: string };
    client = await startClient({
      url: `${url}/api/v1/portfolio/${portfolioId}/cover`,
      session: sessionId,
      bodies,
    });

    const uploadTimes: number[] = [];
    const floorTimes: number[] = [];
    for (const [index, jpeg] of jpegs.entries()) {
      // Interleaved, so both see the same machine state.
      const t0 = performance.now();
      await floor(jpeg);
      const t1 = performance.now();
      const { status, ms } = await client.upload(index);
      if (status !== 200) throw new Error(`upload failed: ${status}`);
      if (index < WARMUP) continue;
      floorTimes.push(t1 - t0);
      uploadTimes.push(ms);
    }

    const uploadMs = median(uploadTimes);
    const floorMs = median(floorTimes);
    return {
      name: 'upload-5mb-jpeg',
      bytes: Math.round(jpegs.reduce((sum, jpeg) => sum + jpeg.length, 0) / jpegs.length),
      rounds: ROUNDS,
      uploadMedianMs: +uploadMs.toFixed(2),
      uploadP90Ms: +p90(uploadTimes).toFixed(2),
      hashAndMetadataMedianMs: +floorMs.toFixed(2),
      ratio: +(uploadMs / floorMs).toFixed(2),
      target: 1.5,
      pass: uploadMs / floorMs <= 1.5,
    };
  } finally {
    client?.stop();
    await server?.stop();
    await rm(work, { recursive: true, force: true });
  }
}

async function main() {
  const result = await benchUpload();
  console.log(
    `upload of a ${(result.bytes / 1024 / 1024).toFixed(1)} MB JPEG: ${result.uploadMedianMs} ms ` +
      `(median of ${result.rounds}, p90 ${result.uploadP90Ms} ms); md5+sha256+sharp metadata alone: ${result.hashAndMetadataMedianMs} ms; ` +
      `ratio ${result.ratio}× (target ≤ ${result.target}×) ${result.pass ? 'PASS' : 'FAIL'}`,
  );
  const dir = join(import.meta.dirname, 'results');
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${new Date().toISOString().slice(0, 10)}-upload.json`);
  await writeFile(
    file,
    `${JSON.stringify({ ...result, date: new Date().toISOString(), node: process.version }, null, 2)}\n`,
  );
  console.log(`wrote ${file}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv[2] === 'client') await runClient();
  else await main();
}
