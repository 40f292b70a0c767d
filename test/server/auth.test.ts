import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { readSnapshotDocument } from '../../server/storage/embedded/snapshot-file';
import { buildApp } from '../../server/app';
import type * as PasswordModule from '../../server/auth/password';
import { expectError } from '../helpers/error-body';
import {
  embeddedStore,
  ADMIN,
  makeTempDir,
  startTestServer,
  type TestServer,
  embeddedOnly,
} from '../helpers/test-server';

/** Lets a test hold a sign-in between its password check and its answer. */
const gate = vi.hoisted(() => ({ hold: null as Promise<void> | null, reached: () => {} }));
vi.mock('../../server/auth/password', async (importOriginal) => {
  const real = await importOriginal<typeof PasswordModule>();
  return {
    ...real,
    verifyPassword: async (password: string, stored: string) => {
      const valid = await real.verifyPassword(password, stored);
      if (gate.hold) {
        gate.reached();
        await gate.hold;
      }
      return valid;
    },
  };
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every byte of every file under the data directory, as text. */
async function dataDirText(dataDir: string): Promise<string> {
  const entries = await readdir(dataDir, { recursive: true, withFileTypes: true });
  const files = entries.filter((entry) => entry.isFile());
  expect(files.length).toBeGreaterThan(0);
  const texts = await Promise.all(
    files.map((entry) => readFile(join(entry.parentPath ?? entry.path, entry.name), 'utf8')),
  );
  return texts.join('\n');
}

const servers: TestServer[] = [];
async function server(options: Parameters<typeof startTestServer>[0] = {}) {
  const started = await startTestServer(options);
  servers.push(started);
  return started;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('POST /api/v1/appauth (sign in)', () => {
  it('answers 200 with sessionId, createdDate and a later expiredDate', async () => {
    const s = await server();
    const before = Date.now();
    const response = await s.request('POST', '/api/v1/appauth', {
      body: ADMIN,
      session: null,
    });
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['createdDate', 'expiredDate', 'sessionId']);
    const { sessionId, createdDate, expiredDate } = response.body;
    expect(sessionId).toMatch(/^[A-Za-z0-9_-]{43,}$/); // >= 256 random bits, base64url
    expect(Number.isInteger(createdDate)).toBe(true);
    expect(createdDate).toBeGreaterThanOrEqual(before);
    expect(createdDate).toBeLessThanOrEqual(Date.now());
    expect(expiredDate).toBe(createdDate + 12 * 60 * 60_000); // default lifetime 12 h
    expect(expiredDate).toBeGreaterThan(createdDate);
  });

  it('gives distinct session ids for each sign-in', async () => {
    const s = await server();
    const ids = await Promise.all([1, 2, 3].map(() => s.signIn(ADMIN.username, ADMIN.password)));
    expect(new Set([...ids, s.adminSession]).size).toBe(4);
  });

  it('answers the same 401 for an unknown user and a wrong password', async () => {
    const s = await server();
    const unknown = await s.request('POST', '/api/v1/appauth', {
      body: { username: 'nobody', password: 'whatever-pass' },
      session: null,
    });
    const wrong = await s.request('POST', '/api/v1/appauth', {
      body: { username: ADMIN.username, password: 'wrong-password' },
      session: null,
    });
    expectError(unknown, 401, 'INVALID_CREDENTIALS');
    expectError(wrong, 401, 'INVALID_CREDENTIALS');
    expect(unknown.body).toEqual(wrong.body);
  });

  it('spends password-hashing time on unknown users too', async () => {
    // A real cost (2^14) so the hash dominates; unknown users must not answer much faster.
    const s = await server({ auth: { scryptLogN: 14, maxFailedSignIns: 1000 } });
    const timeOf = async (username: string) => {
      const start = performance.now();
      const response = await s.request('POST', '/api/v1/appauth', {
        body: { username, password: 'not-the-password' },
        session: null,
      });
      expect(response.status).toBe(401);
      return performance.now() - start;
    };
    await timeOf('warm-up-user'); // computes the dummy hash once
    const median = (values: number[]) => values.sort((a, b) => a - b)[2]!;
    const unknown: number[] = [];
    const wrong: number[] = [];
    for (let i = 0; i < 5; i++) {
      unknown.push(await timeOf(`nobody-${i}`));
      wrong.push(await timeOf(ADMIN.username));
    }
    expect(median(unknown)).toBeGreaterThan(median(wrong) * 0.4);
  });

  it('rejects unknown fields, missing fields and wrong types with 400', async () => {
    const s = await server();
    for (const body of [
      { ...ADMIN, remember: true },
      { username: ADMIN.username },
      { username: ADMIN.username, password: 12345678 },
      {},
    ]) {
      const response = await s.request('POST', '/api/v1/appauth', { body, session: null });
      expectError(response, 400, 'VALIDATION_FAILED');
    }
  });

  it('answers 429 after repeated failures for a username, even with the right password', async () => {
    const s = await server({ auth: { maxFailedSignIns: 3, failureWindowMs: 60_000 } });
    const attempt = (password: string, username = ADMIN.username) =>
      s.request('POST', '/api/v1/appauth', { body: { username, password }, session: null });
    for (let i = 0; i < 3; i++)
      expectError(await attempt('wrong-password'), 401, 'INVALID_CREDENTIALS');
    const blocked = await attempt('wrong-password');
    expectError(blocked, 429, 'TOO_MANY_ATTEMPTS');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expectError(await attempt(ADMIN.password), 429, 'TOO_MANY_ATTEMPTS');
    // The existing session is unaffected.
    expect((await s.request('GET', '/api/v1/appauth')).status).toBe(200);
  });

  it('blocks an address that tries many usernames', async () => {
    // Per address, four usernames' worth of failures.
    const s = await server({ auth: { maxFailedSignIns: 2 } });
    const attempt = (username: string) =>
      s.request('POST', '/api/v1/appauth', {
        body: { username, password: 'guess-password' },
        session: null,
      });
    for (let i = 0; i < 8; i++) expectError(await attempt(`user-${i}`), 401, 'INVALID_CREDENTIALS');
    expectError(await attempt('user-fresh'), 429, 'TOO_MANY_ATTEMPTS');
  });

  it('lets the block lapse after the failure window', async () => {
    const s = await server({ auth: { maxFailedSignIns: 2, failureWindowMs: 400 } });
    const attempt = (password: string) =>
      s.request('POST', '/api/v1/appauth', {
        body: { username: ADMIN.username, password },
        session: null,
      });
    await attempt('wrong-password');
    await attempt('wrong-password');
    expectError(await attempt(ADMIN.password), 429, 'TOO_MANY_ATTEMPTS');
    await sleep(500);
    expect((await attempt(ADMIN.password)).status).toBe(200);
  });

  it('limits sign-in requests per minute per address with 429', async () => {
    const s = await server({ auth: { signInRequestsPerMinute: 3 } });
    // startTestServer already signed in once.
    expect(
      (await s.request('POST', '/api/v1/appauth', { body: ADMIN, session: null })).status,
    ).toBe(200);
    expect(
      (await s.request('POST', '/api/v1/appauth', { body: ADMIN, session: null })).status,
    ).toBe(200);
    const limited = await s.request('POST', '/api/v1/appauth', { body: ADMIN, session: null });
    expectError(limited, 429, 'RATE_LIMITED');
  });
});

describe('sign-in racing an account change', () => {
  it('gives no session to a sign-in with the old password that finishes after a password change', async () => {
    const s = await server();
    await s.userSession('racer', 'editor');
    let release!: () => void;
    const reached = new Promise<void>((resolve) => (gate.reached = resolve));
    gate.hold = new Promise<void>((resolve) => (release = resolve));
    try {
      // The password is checked, then held, while the admin resets it.
      const pending = s.request('POST', '/api/v1/appauth', {
        body: { username: 'racer', password: 'racer-password' },
        session: null,
      });
      await reached;
      const reset = await s.request('PUT', '/api/v1/users/racer', {
        body: { password: 'reset-password' },
      });
      expect(reset.status).toBe(200);
      gate.hold = null;
      release();
      const late = await pending;
      if (late.status === 200) {
        const use = await s.request('GET', '/api/v1/appauth', { session: late.body.sessionId });
        expect(use.status, 'a session opened with the old password still works').toBe(401);
      }
      expectError(late, 401, 'INVALID_CREDENTIALS');
    } finally {
      gate.hold = null;
      release();
    }
    expect(await s.signIn('racer', 'reset-password')).toBeTruthy();
  });
});

describe('sessions', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  it('accepts the raw session id and "Bearer <id>" in Authorization', async () => {
    const id = await s.signIn(ADMIN.username, ADMIN.password);
    expect((await s.request('GET', '/api/v1/appauth', { session: id })).status).toBe(200);
    expect((await s.request('GET', '/api/v1/appauth', { session: `Bearer ${id}` })).status).toBe(
      200,
    );
    expect((await s.request('GET', '/api/v1/appauth', { session: `bearer ${id}` })).status).toBe(
      200,
    );
  });

  it('answers 401 without a session, with a malformed one, and with an unknown one', async () => {
    const id = await s.signIn(ADMIN.username, ADMIN.password);
    for (const session of [
      null,
      'not a session',
      `Bearer`,
      `Basic ${id}`,
      `${id}x`,
      'A'.repeat(43),
      `Bearer ${id} extra`,
    ]) {
      for (const [method, path] of [
        ['GET', '/api/v1/appauth'],
        ['GET', '/api/v1/portfolio/some-id'],
        ['GET', '/api/v1/users'],
      ] as const) {
        const response = await s.request(method, path, { session });
        expectError(response, 401, 'UNAUTHORIZED');
      }
    }
  });

  it('GET /api/v1/appauth describes the caller and its session, without secrets', async () => {
    const created = await s.request('POST', '/api/v1/appauth', { body: ADMIN, session: null });
    const response = await s.request('GET', '/api/v1/appauth', {
      session: created.body.sessionId,
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      createdDate: created.body.createdDate,
      expiredDate: created.body.expiredDate,
      idleExpiresAt: expect.any(Number),
      user: { username: 'admin', role: 'admin', allowEdit: ['*'] },
    });
    expect(response.body.idleExpiresAt).toBeGreaterThan(Date.now());
    expect(response.body.idleExpiresAt).toBeLessThanOrEqual(created.body.expiredDate);
    expect(JSON.stringify(response.body)).not.toContain(created.body.sessionId);
  });

  it('DELETE /api/v1/appauth ends only the caller’s session', async () => {
    const first = await s.signIn(ADMIN.username, ADMIN.password);
    const second = await s.signIn(ADMIN.username, ADMIN.password);
    const out = await s.request('DELETE', '/api/v1/appauth', { session: first });
    expect(out.status).toBe(204);
    expect(out.body).toBe('');
    expectError(await s.request('GET', '/api/v1/appauth', { session: first }), 401, 'UNAUTHORIZED');
    expectError(
      await s.request('DELETE', '/api/v1/appauth', { session: first }),
      401,
      'UNAUTHORIZED',
    );
    expect((await s.request('GET', '/api/v1/appauth', { session: second })).status).toBe(200);
  });
});

describe('session expiry', () => {
  it('ends a session after its configured lifetime, even while in use', async () => {
    const s = await server({ auth: { sessionLifetimeMs: 1_500 } });
    const created = await s.request('POST', '/api/v1/appauth', { body: ADMIN, session: null });
    const { sessionId: id, createdDate, expiredDate } = created.body;
    expect(expiredDate - createdDate).toBe(1_500);
    expect((await s.request('GET', '/api/v1/appauth', { session: id })).status).toBe(200);
    await sleep(300);
    expect((await s.request('GET', '/api/v1/appauth', { session: id })).status).toBe(200);
    await sleep(Math.max(0, expiredDate - Date.now()) + 50);
    expectError(await s.request('GET', '/api/v1/appauth', { session: id }), 401, 'SESSION_EXPIRED');
    // An expired session stays dead.
    const again = await s.request('GET', '/api/v1/portfolio/x', { session: id });
    expect(again.status).toBe(401);
  });

  it('ends a session left idle, and keeps a session in use alive', async () => {
    const s = await server({ auth: { sessionIdleMs: 1_000 } });
    const idle = await s.signIn(ADMIN.username, ADMIN.password);
    const busy = await s.signIn(ADMIN.username, ADMIN.password);
    const start = Date.now();
    while (Date.now() - start < 1_600) {
      await sleep(250);
      expect((await s.request('GET', '/api/v1/appauth', { session: busy })).status).toBe(200);
    }
    // Over 1.6 s have passed: beyond the idle time for the unused session, never for the busy one.
    expectError(
      await s.request('GET', '/api/v1/appauth', { session: idle }),
      401,
      'SESSION_EXPIRED',
    );
    expect((await s.request('GET', '/api/v1/appauth', { session: busy })).status).toBe(200);
  });
});

describe('secrets at rest', () => {
  embeddedOnly('reads its files')(
    'stores sessions only as a hash: the raw id is in no file of the data dir',
    async () => {
      const s = await server();
      const id = await s.signIn(ADMIN.username, ADMIN.password);
      await embeddedStore(s.app).compactNow(); // snapshot and journal both on disk
      const text = await dataDirText(s.dataDir);
      expect(text).not.toContain(id);
      expect(text).not.toContain(s.adminSession);
      const { createHash } = await import('node:crypto');
      expect(text).toContain(createHash('sha256').update(id).digest('hex'));
      // And the stored session still works after a restart.
      await s.stop();
      const again = await server({ dataDir: s.dataDir });
      expect((await again.request('GET', '/api/v1/appauth', { session: id })).status).toBe(200);
    },
  );

  embeddedOnly('reads its files')('stores passwords as scrypt hashes, never plain', async () => {
    const s = await server();
    const password = 'plain-text-canary-42';
    await s.request('POST', '/api/v1/users', {
      body: { username: 'canary', password, role: 'editor' },
    });
    await s.request('PUT', '/api/v1/users/canary', { body: { password: `${password}-2` } });
    await embeddedStore(s.app).compactNow();
    const text = await dataDirText(s.dataDir);
    expect(text).not.toContain(password);
    expect(text).not.toContain(ADMIN.password);
    expect(text).toMatch(/"passwordHash":"scrypt\$10\$8\$1\$/);
  });

  it('hashes with OWASP’s scrypt parameters by default (N=2^17, r=8, p=1)', async () => {
    const dataDir = await makeTempDir();
    const app = await buildApp({ dataDir, bootstrapAdmin: ADMIN }); // no auth overrides
    try {
      await embeddedStore(app).compactNow();
      const db = (await readSnapshotDocument(join(dataDir, 'db.json'))) as any;
      const hash: string = db.collections.users.admin.passwordHash;
      const [scheme, logN, r, p, salt, key] = hash.split('$');
      expect({ scheme, logN, r, p }).toEqual({ scheme: 'scrypt', logN: '17', r: '8', p: '1' });
      expect(Buffer.from(salt!, 'base64')).toHaveLength(16);
      expect(Buffer.from(key!, 'base64')).toHaveLength(32);
      const response = await app.inject({
        method: 'POST',
        url: '/api/v1/appauth',
        payload: ADMIN,
      });
      expect(response.statusCode).toBe(200);
    } finally {
      await app.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
