/**
 * Upload cost against its floor: a 5 MB JPEG uploaded through the real server over HTTP
 * (multipart, streamed to the blob store, sniffed, inspected, fsync'd, committed), compared with
 * hashing the same bytes (md5 + sha256) and reading their sharp metadata in this process alone.
 * Target: upload ≤ 1.5× the floor. Run: `tsx bench/upload.ts`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import sharp from 'sharp';
import { buildApp } from '../server/app';

const ROUNDS = 12;
const WARMUP = 2;
const ADMIN = { username: 'bench', password: 'bench-password-1' };

/** Distinct JPEGs of about 5 MB (noise compresses poorly, so the size is easy to aim at). */
async function makeJpegs(count: number): Promise<Buffer[]> {
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

async function floor(bytes: Buffer): Promise<void> {
  createHash('md5').update(bytes).digest('hex');
  createHash('sha256').update(bytes).digest('hex');
  await sharp(bytes).metadata();
}

interface MultipartBody {
  boundary: string;
  bytes: Buffer;
}

/**
 * The request body is built before timing and written in one go, so the client's own encoding
 * work (it shares this process with the server) is not counted as upload cost.
 */
function multipartBody(file: Buffer, filename: string): MultipartBody {
  const boundary = `----bench${randomBytes(8).toString('hex')}`;
  const head =
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n` +
    'Content-Type: image/jpeg\r\n\r\n';
  return {
    boundary,
    bytes: Buffer.concat([Buffer.from(head), file, Buffer.from(`\r\n--${boundary}--\r\n`)]),
  };
}

function putMultipart(url: string, session: string, body: MultipartBody): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'PUT',
        headers: {
          authorization: session,
          'content-type': `multipart/form-data; boundary=${body.boundary}`,
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

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

export async function benchUpload() {
  const jpegs = await makeJpegs(ROUNDS + WARMUP);
  const bodies = jpegs.map((jpeg, index) => multipartBody(jpeg, `photo-${index}.jpg`));
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-upload-'));
  const app = await buildApp({ dataDir, bootstrapAdmin: ADMIN, auth: { scryptLogN: 10 } });
  try {
    const url = (await app.listen({ host: '127.0.0.1', port: 0 })).replace(
      'localhost',
      '127.0.0.1',
    );
    const post = (path: string, body: unknown, session?: string) =>
      fetch(url + path, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(session ? { authorization: session } : {}),
        },
        body: JSON.stringify(body),
      }).then((response) => response.json() as Promise<Record<string, string>>);
    const { sessionId } = await post('/api/v1/appauth', ADMIN);
    const { portfolioId } = await post(
      '/api/v1/portfolio',
      { memberBarcode: 'B1', category: 'Bench', projectTitle: 'Bench', projectDetail: 'Bench' },
      sessionId,
    );

    const uploadTimes: number[] = [];
    const floorTimes: number[] = [];
    for (const [index, jpeg] of jpegs.entries()) {
      // Interleaved, so both see the same machine state.
      const t0 = performance.now();
      await floor(jpeg);
      const t1 = performance.now();
      const status = await putMultipart(
        `${url}/api/v1/portfolio/${portfolioId}/cover`,
        sessionId!,
        bodies[index]!,
      );
      const t2 = performance.now();
      if (status !== 200) throw new Error(`upload failed: ${status}`);
      if (index < WARMUP) continue;
      floorTimes.push(t1 - t0);
      uploadTimes.push(t2 - t1);
    }
    await app.blobStore.idle();

    const uploadMs = median(uploadTimes);
    const floorMs = median(floorTimes);
    return {
      name: 'upload-5mb-jpeg',
      bytes: Math.round(jpegs.reduce((sum, jpeg) => sum + jpeg.length, 0) / jpegs.length),
      rounds: ROUNDS,
      uploadMedianMs: +uploadMs.toFixed(2),
      hashAndMetadataMedianMs: +floorMs.toFixed(2),
      ratio: +(uploadMs / floorMs).toFixed(2),
      target: 1.5,
      pass: uploadMs / floorMs <= 1.5,
    };
  } finally {
    await app.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  const result = await benchUpload();
  console.log(
    `upload of a ${(result.bytes / 1024 / 1024).toFixed(1)} MB JPEG: ${result.uploadMedianMs} ms ` +
      `(median of ${result.rounds}); md5+sha256+sharp metadata alone: ${result.hashAndMetadataMedianMs} ms; ` +
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

if (import.meta.url === `file://${process.argv[1]}`) await main();
