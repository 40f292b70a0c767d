import { rm } from 'node:fs/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { killRunningClis, spawnCli, type CliProcess } from '../helpers/cli-process';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres';
import { ADMIN, makeTempDir, portfolioBody, TEST_BACKEND } from '../helpers/test-server';

/** Child processes start slowly on a busy machine. */
const TIMEOUT = 240_000;
const PER_ROUND = 33; // a create and two updates each: 99 mutations, one batch
const dirs: string[] = [];
const databases: TestDatabase[] = [];
afterEach(killRunningClis);
afterAll(async () => {
  await killRunningClis();
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  await Promise.all(databases.map((database) => database.drop()));
});

/** A small seeded generator (mulberry32), so a failing kill point can be replayed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** In the PostgreSQL run (PORTFOLIO_TEST_BACKEND=postgres) the hub keeps its data in a database. */
async function hubDatabase(): Promise<string[]> {
  if (TEST_BACKEND !== 'postgres') return [];
  const database = await createTestDatabase();
  databases.push(database);
  return ['--database', database.url];
}

function serve(dataDir: string, database: string[]): CliProcess {
  return spawnCli(['serve', '--port', '0', '--data-dir', dataDir, ...database], {
    PORTFOLIO_ADMIN_USERNAME: ADMIN.username,
    PORTFOLIO_ADMIN_PASSWORD: ADMIN.password,
    PORTFOLIO_LOG_LEVEL: 'warn',
  });
}

async function call(
  url: string,
  method: string,
  path: string,
  auth: string | null,
  body?: unknown,
) {
  const response = await fetch(url + path, {
    method,
    headers: {
      ...(auth && { authorization: auth }),
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** Round `round`'s batch: each portfolio created, then edited twice, in order. */
function batch(round: number) {
  const mutations = [];
  for (let i = 0; i < PER_ROUND; i++) {
    const portfolioId = `kill-${round}-${i}`;
    mutations.push({
      mutationId: `kill-rep:${portfolioId}:1`,
      portfolioId,
      op: 'create',
      fields: portfolioBody({ projectTitle: `Round ${round} #${i}` }),
    });
  }
  for (let i = 0; i < PER_ROUND; i++) {
    const portfolioId = `kill-${round}-${i}`;
    mutations.push(
      {
        mutationId: `kill-rep:${portfolioId}:2`,
        portfolioId,
        op: 'update',
        baseRevision: 1,
        fields: { readyToBuy: 'first edit', generalTag: ['a'] },
      },
      {
        mutationId: `kill-rep:${portfolioId}:3`,
        portfolioId,
        op: 'update',
        baseRevision: 2,
        fields: { projectLanuching: 'second edit', generalTag: ['a', 'b'] },
      },
    );
  }
  return { replicaId: 'kill-rep', mutations };
}

describe('sync mutations survive kill -9 of the hub', { timeout: TIMEOUT }, () => {
  it('applies each mutation of a batch exactly once when the batch is retried after a kill at a seeded random point', async () => {
    const dataDir = await makeTempDir('portfolio-sync-crash-');
    dirs.push(dataDir);
    const database = await hubDatabase();
    const random = seeded(16);
    let cli = serve(dataDir, database);
    let url = await cli.url(120_000);
    const admin = (await call(url, 'POST', '/api/v1/appauth', null, ADMIN)).body.sessionId;
    const device = await call(url, 'POST', '/api/v1/devices', admin, {
      name: 'crash replica',
      replicaId: 'kill-rep',
    });
    expect(device.status).toBe(201);
    const token = `Bearer ${device.body.token}`;
    let seqBefore = (await call(url, 'GET', '/api/v1/changes?since=0&limit=1', token)).body.next;

    let cut = 0;
    for (let round = 0; round < 3; round++) {
      const body = batch(round);
      // Kill once the hub has committed this many of the batch's 99 changes.
      const killAt = 1 + Math.floor(random() * 90);
      const pushed = call(url, 'POST', '/api/v1/sync/mutations', token, body).catch(
        () => undefined,
      );
      for (;;) {
        const newest = (
          await call(url, 'GET', `/api/v1/changes?since=${seqBefore}&limit=1000`, token).catch(
            () => undefined,
          )
        )?.body?.next;
        if (newest !== undefined && newest - seqBefore >= killAt) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      cli.child.kill('SIGKILL');
      expect((await cli.exited).signal).toBe('SIGKILL');
      // The batch's answer was cut by the kill (unless it had just finished).
      if ((await pushed) === undefined) cut++;

      cli = serve(dataDir, database);
      url = await cli.url(120_000);
      const retried = await call(url, 'POST', '/api/v1/sync/mutations', token, body);
      expect(retried.status, JSON.stringify(retried.body)).toBe(200);
      expect(
        retried.body.results.filter((r: { status: string }) => r.status !== 'applied'),
        `round ${round}, killed after ${killAt} changes`,
      ).toEqual([]);
      // Once more: every result is answered again, nothing moves.
      const again = await call(url, 'POST', '/api/v1/sync/mutations', token, body);
      expect(again.body).toEqual(retried.body);

      for (let i = 0; i < PER_ROUND; i++) {
        const id = `kill-${round}-${i}`;
        const detail = await call(url, 'GET', `/api/v1/portfolio/${id}`, admin);
        expect(detail.body).toMatchObject({
          revision: 3,
          projectTitle: `Round ${round} #${i}`,
          readyToBuy: 'first edit',
          projectLanuching: 'second edit',
          generalTag: ['a', 'b'],
        });
        const history = await call(url, 'GET', `/api/v1/portfolio/${id}/revisions`, admin);
        expect(history.body.revisions.map((r: { command: string }) => r.command)).toEqual([
          'sync',
          'sync',
          'create',
        ]);
      }
      // Exactly one committed change per mutation: seq moved by 99, no more.
      const newest = (
        await call(url, 'GET', `/api/v1/changes?since=${seqBefore}&limit=1000`, token)
      ).body;
      expect(newest.changes).toHaveLength(PER_ROUND);
      expect(newest.next - seqBefore).toBe(PER_ROUND * 3);
      seqBefore = newest.next;
    }
    expect(cut, 'no kill landed in the middle of a batch').toBeGreaterThan(0);
    cli.child.kill('SIGTERM');
    await cli.exited;
  });
});
