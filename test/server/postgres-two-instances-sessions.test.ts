import { rm } from 'node:fs/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresBackend } from '../../server/storage/postgres/postgres-backend';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../helpers/postgres';
import {
  type ApiResponse,
  makeTempDir,
  startTestServer,
  type TestServer,
} from '../helpers/test-server';

/*
 * Sessions across two real instances on one PostgreSQL database, each remembering the sessions it
 * saw (DESIGN §12, docs/API.md §13): a change on A ends or changes the session on B by the notice
 * B receives on its LISTEN connection. The cache's own time limit is set to a minute here, far
 * longer than any wait below, so only the notice (or the lost connection) can explain B's answer.
 */
const unavailable = await postgresUnavailable('sessions across two instances on PostgreSQL');

const CACHE_MS = 60_000;
/** Longest wait for B to follow A; far below CACHE_MS. */
const FOLLOW_MS = 15_000;

/** Polls `server` until GET `path` answers `status`; answers that response and how long it took. */
async function until(
  server: TestServer,
  session: string,
  accept: (response: ApiResponse) => boolean,
  path = '/api/v1/appauth',
): Promise<{ response: ApiResponse; ms: number }> {
  const start = performance.now();
  for (;;) {
    const response = await server.request('GET', path, { session });
    const ms = performance.now() - start;
    if (accept(response)) return { response, ms };
    if (ms > FOLLOW_MS)
      throw new Error(`still ${response.status} ${JSON.stringify(response.body)} after ${ms} ms`);
  }
}
const status = (expected: number) => (response: ApiResponse) => response.status === expected;

describe.skipIf(unavailable)('sessions across two instances, each with a session cache', () => {
  let database: TestDatabase;
  let dataDir: string;
  let a: TestServer;
  let b: TestServer;
  /** How long B took to follow A, per change (reported at the end). */
  const delays: Record<string, number> = {};

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = await makeTempDir();
    const options = { database: database.url, dataDir, auth: { sessionCacheMs: CACHE_MS } };
    a = await startTestServer(options);
    b = await startTestServer(options);
  }, 60_000);

  afterAll(async () => {
    if (Object.keys(delays).length > 0) {
      const lines = Object.entries(delays).map(([what, ms]) => `  ${what}: ${ms.toFixed(1)} ms`);
      console.info(`B followed A after:\n${lines.join('\n')}`);
    }
    await a?.stop();
    await b?.stop();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /** A session of a new user, made on A and used on both (so both remember it). */
  async function sharedSession(username: string, role: 'viewer' | 'editor' | 'admin') {
    const session = await a.userSession(username, role, ['Interior']);
    for (const server of [a, b, a, b])
      expect((await server.request('GET', '/api/v1/appauth', { session })).status).toBe(200);
    return session;
  }

  it('signing out on A: A refuses the session at once, B as soon as the notice arrives', async () => {
    const session = await sharedSession('leaver', 'viewer');
    expect((await a.request('DELETE', '/api/v1/appauth', { session })).status).toBe(204);
    const onA = await a.request('GET', '/api/v1/appauth', { session });
    expect(onA.status).toBe(401);
    expect(onA.body.code).toBe('UNAUTHORIZED');
    const onB = await until(b, session, status(401));
    expect(onB.response.body.code).toBe('UNAUTHORIZED');
    delays['sign-out'] = onB.ms;
  });

  it('a password reset on A ends the sessions on B', async () => {
    const session = await sharedSession('forgetful', 'editor');
    const reset = await a.request('PUT', '/api/v1/users/forgetful', {
      body: { password: 'a new long password' },
    });
    expect(reset.status).toBe(200);
    delays['password reset'] = (await until(b, session, status(401))).ms;
    expect((await b.signIn('forgetful', 'a new long password')).length).toBeGreaterThan(16);
  });

  it('a role change on A ends the sessions on B; a change of allowEdit shows on B', async () => {
    const session = await sharedSession('promoted', 'editor');
    const narrowed = await a.request('PUT', '/api/v1/users/promoted', {
      body: { allowEdit: ['Landscape'] },
    });
    expect(narrowed.status).toBe(200);
    const seen = await until(b, session, (response) =>
      Boolean(response.body.user?.allowEdit?.includes('Landscape')),
    );
    expect(seen.response.body.user).toMatchObject({ role: 'editor', allowEdit: ['Landscape'] });
    delays['allowEdit change'] = seen.ms;

    expect(
      (await a.request('PUT', '/api/v1/users/promoted', { body: { role: 'admin' } })).status,
    ).toBe(200);
    delays['role change'] = (await until(b, session, status(401))).ms;
  });

  it('deleting the user on A ends the sessions on B', async () => {
    const session = await sharedSession('departed', 'editor');
    expect((await a.request('DELETE', '/api/v1/users/departed')).status).toBe(204);
    delays['user deleted'] = (await until(b, session, status(401))).ms;
  });

  it('revoking a device on A refuses its token on B with DEVICE_REVOKED', async () => {
    const made = await a.request('POST', '/api/v1/devices', {
      body: { name: 'Laptop', replicaId: 'sessions-replica' },
    });
    expect(made.status).toBe(201);
    const token = `Bearer ${made.body.token}`;
    for (const server of [b, a, b])
      expect((await server.request('GET', '/api/v1/appauth', { session: token })).status).toBe(200);
    const revoked = await a.request('DELETE', `/api/v1/devices/${made.body.deviceId}`);
    expect(revoked.status).toBe(204);
    const onB = await until(b, token, status(401));
    expect(onB.response.body.code).toBe('DEVICE_REVOKED');
    delays['device revoked'] = onB.ms;
  });

  it('a device signed in again for its replica on A: the replaced token is refused on B', async () => {
    const body = { name: 'Desktop', replicaId: 'replaced-replica' };
    const first = await a.request('POST', '/api/v1/devices', { body });
    const token = `Bearer ${first.body.token}`;
    expect((await b.request('GET', '/api/v1/appauth', { session: token })).status).toBe(200);
    expect((await a.request('POST', '/api/v1/devices', { body })).status).toBe(201);
    const onB = await until(b, token, status(401));
    expect(onB.response.body.code).toBe('DEVICE_REVOKED');
  });

  it("B's LISTEN connection cut: a session signed out on A meanwhile is refused on B; B listens again", async () => {
    const changes = (b.app.backend as PostgresBackend).database.changes();
    const session = await sharedSession('cut-off', 'viewer');
    const other = await sharedSession('cut-off-other', 'viewer');
    const admin = new pg.Client(database.url);
    await admin.connect();
    try {
      const pid = changes.backendPid;
      expect(pid).toBeTypeOf('number');
      // With a timeout, pg_terminate_backend waits until the backend is gone.
      const { rows } = await admin.query('SELECT pg_terminate_backend($1, 5000) AS done', [pid]);
      expect(rows[0].done).toBe(true);
      // Ended on A while B cannot hear it: B must not answer from what it remembered.
      expect((await a.request('DELETE', '/api/v1/appauth', { session })).status).toBe(204);
      expect((await b.request('GET', '/api/v1/appauth', { session })).status).toBe(401);
      // A session still live keeps working on B (read from the database meanwhile).
      expect((await b.request('GET', '/api/v1/appauth', { session: other })).status).toBe(200);

      // B reconnects by itself (backoff from 100 ms), on a new backend, and follows A again.
      const start = performance.now();
      while (!changes.listening && performance.now() - start < FOLLOW_MS)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(changes.listening).toBe(true);
      expect(changes.backendPid).not.toBe(pid);
      expect((await b.request('GET', '/api/v1/appauth', { session: other })).status).toBe(200);
      expect((await a.request('DELETE', '/api/v1/appauth', { session: other })).status).toBe(204);
      delays['sign-out after reconnecting'] = (await until(b, other, status(401))).ms;
    } finally {
      await admin.end();
    }
  });
});
