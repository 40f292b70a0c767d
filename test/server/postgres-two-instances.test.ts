import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { download, fixtures, uploadMultipart } from '../helpers/file-fixtures';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../helpers/postgres';
import {
  ADMIN,
  type ApiResponse,
  makeTempDir,
  portfolioBody,
  startTestServer,
  type TestServer,
} from '../helpers/test-server';

/*
 * Two real server instances (two buildApp, each listening on its own port) on one PostgreSQL
 * database and one shared data directory of blobs, spoken to over real HTTP (DESIGN §12).
 */
const unavailable = await postgresUnavailable('two instances on PostgreSQL');

describe.skipIf(unavailable)('two instances on one PostgreSQL database', () => {
  let database: TestDatabase;
  let dataDir: string;
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = await makeTempDir();
    // Started together: migrations run once (advisory lock), the first admin is made once.
    [a, b] = await Promise.all([
      startTestServer({ database: database.url, dataDir }),
      startTestServer({ database: database.url, dataDir }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /** The same request on the other instance, with the same session. */
  const on = (server: TestServer, session: string) => ({
    get: (path: string) => server.request('GET', path, { session }),
  });

  it('a session made on one works on the other; signing out ends it on both', async () => {
    const session = await a.signIn(ADMIN.username, ADMIN.password);
    expect((await on(b, session).get('/api/v1/appauth')).status).toBe(200);
    expect((await on(a, session).get('/api/v1/appauth')).status).toBe(200);
    const out = await b.request('DELETE', '/api/v1/appauth', { session });
    expect(out.status).toBe(204);
    // At once on the instance that signed out; on the other once its notice arrives (A may
    // remember the session for a few seconds at most: postgres-two-instances-sessions.test.ts).
    expect((await on(b, session).get('/api/v1/appauth')).status).toBe(401);
    await expect
      .poll(async () => (await on(a, session).get('/api/v1/appauth')).status, { timeout: 5_000 })
      .toBe(401);
  });

  it('a device made on one works on the other; revoked on the other, it is refused on both', async () => {
    const made = await a.request('POST', '/api/v1/devices', {
      body: { name: 'Shared hub', replicaId: 'two-instance-replica' },
    });
    expect(made.status).toBe(201);
    const token = `Bearer ${made.body.token}`;
    expect((await on(b, token).get('/api/v1/appauth')).status).toBe(200);
    // The replica id is bound across instances: a second admin's device on B may not take it.
    await b.request('POST', '/api/v1/users', {
      body: { username: 'other-admin', password: 'other-admin-password', role: 'admin' },
    });
    const other = await b.signIn('other-admin', 'other-admin-password');
    const taken = await b.request('POST', '/api/v1/devices', {
      session: other,
      body: { name: 'Thief', replicaId: 'two-instance-replica' },
    });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('REPLICA_ID_TAKEN');
    const listed = await b.request('GET', '/api/v1/devices');
    expect(listed.body.devices.map((d: { deviceId: string }) => d.deviceId)).toEqual([
      made.body.deviceId,
    ]);
    expect((await b.request('DELETE', `/api/v1/devices/${made.body.deviceId}`)).status).toBe(204);
    for (const server of [b, a]) {
      await expect
        .poll(async () => (await on(server, token).get('/api/v1/appauth')).body.code, {
          timeout: 5_000,
        })
        .toBe('DEVICE_REVOKED');
    }
  });

  it('a write on one is read at once on the other: detail and list', async () => {
    const created = await a.request('POST', '/api/v1/portfolio', {
      body: portfolioBody({ projectTitle: 'Made on A' }),
    });
    expect(created.status).toBe(201);
    const id = created.body.portfolioId;
    const detail = await b.request('GET', `/api/v1/portfolio/${id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.projectTitle).toBe('Made on A');

    const updated = await b.request('PUT', `/api/v1/portfolio/${id}`, {
      body: portfolioBody({ projectTitle: 'Changed on B' }),
      headers: { 'if-match': '"1"' },
    });
    expect(updated.status).toBe(200);
    const list = await a.request(
      'GET',
      `/api/v1/portfolio?field=portfolioId,projectTitle&pageSize=1000`,
    );
    expect(list.status).toBe(200);
    expect(list.body.lists).toContainEqual({ portfolioId: id, projectTitle: 'Changed on B' });
    expect((await a.request('GET', `/api/v1/portfolio/${id}`)).body.revision).toBe(2);
  });

  it('page tokens cross instances', async () => {
    for (let index = 0; index < 5; index++) {
      const made = await (index % 2 ? a : b).request('POST', '/api/v1/portfolio', {
        body: portfolioBody({ projectTitle: `Paged ${index}`, memberBarcode: 'PAGED' }),
      });
      expect(made.status).toBe(201);
    }
    const query = '/api/v1/portfolio?filter=memberBarcode:PAGED&orderBy=projectTitle&pageSize=2';
    const titles: string[] = [];
    let token = '';
    let page = 0;
    do {
      const server = page++ % 2 ? b : a; // each page from the other instance
      const response = await server.request(
        'GET',
        `${query}&field=projectTitle${token ? `&pageToken=${token}` : ''}`,
      );
      expect(response.status).toBe(200);
      titles.push(
        ...response.body.lists.map((item: { projectTitle: string }) => item.projectTitle),
      );
      token = response.body.nextPageToken;
    } while (token);
    expect(titles).toEqual(['Paged 0', 'Paged 1', 'Paged 2', 'Paged 3', 'Paged 4']);
  });

  it('20 concurrent conditional updates split across both: exactly one wins', async () => {
    const created = await a.request('POST', '/api/v1/portfolio', { body: portfolioBody() });
    const id = created.body.portfolioId;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        (index % 2 ? a : b).request('PUT', `/api/v1/portfolio/${id}`, {
          body: portfolioBody({ projectTitle: `Writer ${index}` }),
          headers: { 'if-match': '"1"' },
        }),
      ),
    );
    const statuses = results.map((result) => result.status).sort();
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(19);
    const winner = results.find((result) => result.status === 200)!.body.projectTitle;
    for (const server of [a, b]) {
      const detail = await server.request('GET', `/api/v1/portfolio/${id}`);
      expect(detail.body).toMatchObject({ revision: 2, projectTitle: winner });
    }
  });

  it('sign-in throttling counts the failed attempts made on both', async () => {
    // A user of its own: the address-wide limit is four times the per-user one.
    await a.request('POST', '/api/v1/users', {
      body: { username: 'throttled', password: 'right-password-1', role: 'viewer' },
    });
    const attempt = (server: TestServer, password: string) =>
      server.request('POST', '/api/v1/appauth', {
        body: { username: 'throttled', password },
        session: null,
      });
    // The limit is 5 failures: 3 on A and 2 on B reach it together.
    for (const server of [a, b, a, b, a]) {
      expect((await attempt(server, 'wrong-password')).status).toBe(401);
    }
    const blocked = await attempt(b, 'right-password-1');
    expect(blocked.status).toBe(429);
    expect(blocked.body.code).toBe('TOO_MANY_ATTEMPTS');
    expect((await attempt(a, 'right-password-1')).status).toBe(429);
  });

  it('a file uploaded on one downloads from the other, byte for byte', async () => {
    const created = await a.request('POST', '/api/v1/portfolio', { body: portfolioBody() });
    const id = created.body.portfolioId;
    const bytes = fixtures.pdf();
    const uploaded = await uploadMultipart(a, `/api/v1/portfolio/${id}/draftingProcess`, bytes, {
      filename: 'plan.pdf',
      contentType: 'application/pdf',
    });
    expect(uploaded.status).toBe(201);
    const detail = await b.request('GET', `/api/v1/portfolio/${id}`);
    const fileId = detail.body.draftingProcess[0].fileID;
    const response = await download(b, `/api/v1/portfolio/${id}/files/${fileId}`);
    expect(response.status).toBe(200);
    const sha = (buffer: Buffer) => createHash('sha256').update(buffer).digest('hex');
    expect(sha(response.bytes)).toBe(sha(bytes));
  });

  it("the feed's seq strictly increases across writes on both", async () => {
    const ids: string[] = [];
    await Promise.all(
      Array.from({ length: 10 }, async (_, index) => {
        const made = await (index % 2 ? a : b).request('POST', '/api/v1/portfolio', {
          body: portfolioBody({ projectTitle: `Feed ${index}` }),
        });
        expect(made.status).toBe(201);
        ids.push(made.body.portfolioId);
      }),
    );
    for (const server of [a, b]) {
      const feed = await server.request('GET', '/api/v1/changes?since=0&limit=1000');
      expect(feed.status).toBe(200);
      const seqs: number[] = feed.body.changes.map((change: { seq: number }) => change.seq);
      for (let index = 1; index < seqs.length; index++)
        expect(seqs[index]).toBeGreaterThan(seqs[index - 1]!);
      const listed = new Set(feed.body.changes.map((c: { portfolioId: string }) => c.portfolioId));
      for (const id of ids) expect(listed.has(id)).toBe(true);
    }
  });

  // Last: it spends this address's sign-in requests for the minute.
  it('the sign-in rate limit counts the requests made on both', async () => {
    let allowed = 0;
    let limited: ApiResponse | undefined;
    for (let index = 0; index < 70 && !limited; index++) {
      const response = await (index % 2 ? a : b).request('POST', '/api/v1/appauth', {
        body: ADMIN,
        session: null,
      });
      if (response.status === 429) limited = response;
      else allowed++;
    }
    // 30 a minute from one address (the default), counted once for both instances; the
    // earlier tests of this file spent some already.
    expect(limited?.body.code).toBe('RATE_LIMITED');
    expect(allowed).toBeLessThanOrEqual(30);
  });
});
