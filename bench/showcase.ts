/**
 * The public showcase (DESIGN §15): req/s of the gallery and of a portfolio page with warm
 * derivatives against the API's detail, in one process on the embedded store; and the cold
 * derivatives of a ~5 MB JPEG against sharp's own resize to the same widths and formats.
 * Run: npx tsx bench/showcase.ts
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import sharp from 'sharp';
import { buildApp } from '../server/app';
import { DERIVATIVE_WIDTHS, Derivatives, derivativeFormats } from '../server/showcase/derivatives';

const PORTFOLIOS = 60;
const SECONDS = 5;

async function rate(url: string, headers: Record<string, string> = {}): Promise<number> {
  const result = await autocannon({ url, connections: 10, duration: SECONDS, headers });
  if (result.non2xx > 0) throw new Error(`${url}: ${result.non2xx} answers were not 2xx`);
  return result.requests.average;
}

function noiseJpeg(width: number, height: number, quality: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let i = 0; i < raw.length; i++) raw[i] = (i * 2654435761) >>> 24;
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .jpeg({ quality })
    .toBuffer();
}

async function pages() {
  const dataDir = await mkdtemp(join(tmpdir(), 'portfolio-bench-showcase-'));
  const admin = { username: 'admin', password: 'bench-password-1' };
  const app = await buildApp({
    dataDir,
    bootstrapAdmin: admin,
    auth: { scryptLogN: 10 },
    showcase: { requestsPerMinute: 10_000_000 },
  });
  const base = (await app.listen({ host: '127.0.0.1', port: 0 })).replace('localhost', '127.0.0.1');
  try {
    const call = async (method: string, path: string, body?: unknown, session?: string) => {
      const response = await fetch(base + path, {
        method,
        headers: {
          ...(body !== undefined && { 'content-type': 'application/json' }),
          ...(session && { authorization: session }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return response.json() as Promise<Record<string, unknown>>;
    };
    const session = String((await call('POST', '/api/v1/appauth', admin)).sessionId);
    await call(
      'PUT',
      '/api/v1/settings/showcase',
      { enabled: true, title: 'Bench', intro: 'x' },
      session,
    );
    const cover = await noiseJpeg(1600, 1000, 80);
    let id = '';
    for (let at = 0; at < PORTFOLIOS; at++) {
      const body = {
        memberBarcode: `B${at}`,
        category: `Category ${at % 6}`,
        projectTitle: `Work ${at}`,
        projectDetail: 'Detail '.repeat(60),
        relativeCategory: [`Tag ${at % 9}`],
      };
      id = String((await call('POST', '/api/v1/portfolio', body, session)).portfolioId);
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(cover)]), 'cover.jpg');
      await fetch(`${base}/api/v1/portfolio/${id}/cover`, {
        method: 'PUT',
        headers: { authorization: session },
        body: form,
      });
      await call('PUT', `/api/v1/portfolio/${id}`, { ...body, command: 'publish' }, session);
    }
    await app.showcase.derivatives.idle(); // warm: every derivative made after its upload
    const detail = await rate(
      `${base}/api/v1/portfolio/${id}?field=portfolioId,projectTitle,projectDetail,category`,
      {
        authorization: session,
      },
    );
    const gallery = await rate(`${base}/showcase`);
    const page = await rate(`${base}/showcase/${id}`);
    console.log(`API detail (no cover data)  ${detail.toFixed(0)} req/s`);
    console.log(
      `showcase gallery (24 cards) ${gallery.toFixed(0)} req/s (${(gallery / detail).toFixed(2)}× the detail)`,
    );
    console.log(
      `showcase portfolio page     ${page.toFixed(0)} req/s (${(page / detail).toFixed(2)}× the detail)`,
    );
  } finally {
    await app.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function cold() {
  const dir = await mkdtemp(join(tmpdir(), 'portfolio-bench-derivatives-'));
  try {
    const source = join(dir, 'source.jpg');
    await sharp(await noiseJpeg(2600, 1800, 92)).toFile(source);
    const megabytes = (await stat(source)).size / 1024 / 1024;
    const formats = derivativeFormats();
    const widths = [...DERIVATIVE_WIDTHS];
    let started = performance.now();
    for (const width of widths)
      for (const format of formats)
        await sharp(source).rotate().resize({ width })[format]().toBuffer();
    const plain = performance.now() - started;
    const derivatives = new Derivatives({
      dir: join(dir, 'media'),
      sourcePath: () => source,
      maxPixels: 50_000_000,
      maxBytes: 1e9,
    });
    await derivatives.init();
    started = performance.now();
    derivatives.prepare('f'.repeat(64), 2600);
    await derivatives.idle();
    const ours = performance.now() - started;
    console.log(
      `cold derivatives of a ${megabytes.toFixed(1)} MB JPEG (${widths.join(', ')} px × ${formats.join(', ')}): ` +
        `${ours.toFixed(0)} ms; sharp's own resize, one call each: ${plain.toFixed(0)} ms (${(ours / plain).toFixed(2)}×)`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await cold();
await pages();
