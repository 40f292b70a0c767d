/**
 * Bulk edit bench (issue 28): one `POST /api/v1/portfolio/bulk` changing 1,000 portfolios
 * (set occasion, add a tag, publish) against the same changes sent one PUT at a time, each
 * waiting for the one before (as a client without bulk edit would), over real HTTP on a fresh
 * embedded data directory. Each mode runs on its own 1,000 portfolios; the target is ≥ 3×.
 *
 *   npx tsx bench/bulk.ts [--size 1000]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp } from '../server/app';

const { values: args } = parseArgs({ options: { size: { type: 'string', default: '1000' } } });
const SIZE = Number(args.size);
const ADMIN = { username: 'bench', password: 'bench-password-1' };
const SYSTEM = { username: 'bench', role: 'admin' as const, allowEdit: ['*'] };

const dataDir = await mkdtemp(join(tmpdir(), 'bench-bulk-'));
const app = await buildApp({ dataDir, bootstrapAdmin: ADMIN, auth: { scryptLogN: 10 } });
const url = (await app.listen({ host: '127.0.0.1', port: 0 })).replace('localhost', '127.0.0.1');
try {
  const session = (
    (await (
      await fetch(`${url}/api/v1/appauth`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(ADMIN),
      })
    ).json()) as { sessionId: string }
  ).sessionId;
  const body = (i: number) => ({
    memberBarcode: `M${i}`,
    category: 'Interior',
    projectTitle: `Bench ${i}`,
    projectDetail: 'A portfolio of the bulk bench.',
    generalTag: ['bench'],
  });
  const seed = async () => {
    const ids: string[] = [];
    for (let i = 0; i < SIZE; i += 100) {
      const made = await Promise.all(
        Array.from({ length: Math.min(100, SIZE - i) }, (_, j) =>
          app.portfolioService.create(SYSTEM, body(i + j)),
        ),
      );
      ids.push(...made.map((record) => record.portfolioId));
    }
    return ids;
  };
  const send = async (method: string, path: string, payload: unknown) => {
    const response = await fetch(url + path, {
      method,
      headers: { authorization: session, 'content-type': 'application/json' },
      body: JSON.stringify(payload),
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text) as { results?: Array<{ status: number }> };
  };

  const bulkIds = await seed();
  let started = performance.now();
  const answer = await send('POST', '/api/v1/portfolio/bulk', {
    ids: bulkIds,
    set: { occasion: ['Wedding'] },
    addTags: { generalTag: ['summer'] },
    command: 'publish',
  });
  const bulkMs = performance.now() - started;
  if (answer.results!.some((result) => result.status !== 200))
    throw new Error('a bulk item failed');

  const putIds = await seed();
  started = performance.now();
  for (const [i, id] of putIds.entries()) {
    await send('PUT', `/api/v1/portfolio/${id}`, {
      ...body(i),
      occasion: ['Wedding'],
      generalTag: ['bench', 'summer'],
      command: 'publish',
    });
  }
  const putMs = performance.now() - started;
  console.log(
    JSON.stringify(
      {
        portfolios: SIZE,
        bulkMs: Math.round(bulkMs),
        onePutAtATimeMs: Math.round(putMs),
        ratio: Number((putMs / bulkMs).toFixed(2)),
        bulkPerSecond: Math.round(SIZE / (bulkMs / 1000)),
        putsPerSecond: Math.round(SIZE / (putMs / 1000)),
      },
      null,
      2,
    ),
  );
} finally {
  await app.close();
  await rm(dataDir, { recursive: true, force: true });
}
