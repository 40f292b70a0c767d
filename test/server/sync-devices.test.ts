import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import packageJson from '../../package.json' with { type: 'json' };
import { expectError } from '../helpers/error-body';
import { startTestServer, type TestServer } from '../helpers/test-server';

describe('sync hello and device tokens (DESIGN §10)', () => {
  let s: TestServer;
  let editor: string;
  let other: string;
  let viewer: string;
  beforeAll(async () => {
    s = await startTestServer();
    editor = await s.userSession('dev-editor', 'editor', ['Interior']);
    other = await s.userSession('dev-other', 'editor', ['*']);
    viewer = await s.userSession('dev-viewer', 'viewer');
  });
  afterAll(() => s.close());

  const bearer = (token: string) => `Bearer ${token}`;

  it('says what it is without a session', async () => {
    const hello = await s.request('GET', '/api/v1/sync/hello', { session: null });
    expect(hello.status).toBe(200);
    expect(hello.body).toEqual({
      product: 'portfolio-manager',
      protocol: 1,
      version: packageJson.version,
    });
  });

  it('makes a device token that works like a session, lists it, and revokes it at once', async () => {
    const created = await s.request('POST', '/api/v1/devices', {
      session: editor,
      body: { name: 'Studio laptop', replicaId: 'replica-a' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      deviceId: expect.any(String),
      token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      name: 'Studio laptop',
      replicaId: 'replica-a',
      username: 'dev-editor',
      createdDate: expect.any(Number),
    });
    const { token, deviceId } = created.body;
    // The hub keeps only the token's hash.
    const stored = JSON.stringify(await s.app.userRepository.listDevices());
    expect(stored).not.toContain(token);

    // The token signs the session out; the device stays.
    await s.request('DELETE', '/api/v1/appauth', { session: editor });
    editor = await s.signIn('dev-editor', 'dev-editor-password');
    const me = await s.request('GET', '/api/v1/appauth', { session: bearer(token) });
    expect(me.status).toBe(200);
    expect(me.body.user.username).toBe('dev-editor');
    expect((await s.request('GET', '/api/v1/changes', { session: bearer(token) })).status).toBe(
      200,
    );

    const own = await s.request('GET', '/api/v1/devices', { session: editor });
    expect(own.status).toBe(200);
    expect(own.body.devices).toEqual([
      {
        deviceId,
        name: 'Studio laptop',
        replicaId: 'replica-a',
        username: 'dev-editor',
        createdDate: created.body.createdDate,
        lastSeen: expect.any(Number),
      },
    ]);
    const otherDevice = await s.request('POST', '/api/v1/devices', {
      session: other,
      body: { name: 'Desk', replicaId: 'replica-b' },
    });
    expect(otherDevice.status).toBe(201);
    expect((await s.request('GET', '/api/v1/devices', { session: other })).body.devices).toEqual([
      expect.objectContaining({ replicaId: 'replica-b', username: 'dev-other' }),
    ]);
    const all = await s.request('GET', '/api/v1/devices');
    expect(all.body.devices.map((d: { replicaId: string }) => d.replicaId)).toEqual([
      'replica-a',
      'replica-b',
    ]);
    const filtered = await s.request('GET', '/api/v1/devices?username=dev-other');
    expect(filtered.body.devices).toHaveLength(1);
    expectError(
      await s.request('GET', '/api/v1/devices?username=dev-other', { session: editor }),
      403,
      'FORBIDDEN',
    );
    // Another user's device is not named to a non-admin.
    expectError(
      await s.request('DELETE', `/api/v1/devices/${deviceId}`, { session: other }),
      404,
      'DEVICE_NOT_FOUND',
    );

    const revoked = await s.request('DELETE', `/api/v1/devices/${deviceId}`, { session: editor });
    expect(revoked.status).toBe(204);
    const refused = await s.request('GET', '/api/v1/changes', { session: bearer(token) });
    expectError(refused, 401, 'DEVICE_REVOKED');
    expect(refused.body.message).toMatch(/signed out of the hub; sign in again/);
    expect((await s.request('GET', '/api/v1/devices', { session: editor })).body.devices).toEqual(
      [],
    );
    expectError(
      await s.request('DELETE', `/api/v1/devices/${deviceId}`, { session: editor }),
      404,
      'DEVICE_NOT_FOUND',
    );
    // An admin revokes anyone's.
    expect((await s.request('DELETE', `/api/v1/devices/${otherDevice.body.deviceId}`)).status).toBe(
      204,
    );
  });

  it('refuses viewers before looking at the body, and devices making devices', async () => {
    expectError(
      await s.request('POST', '/api/v1/devices', { session: viewer, body: { name: '' } }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await s.request('POST', '/api/v1/devices', { session: editor, body: { name: '' } }),
      400,
      'VALIDATION_FAILED',
    );
    const device = await s.request('POST', '/api/v1/devices', {
      session: editor,
      body: { name: 'Phone', replicaId: 'replica-c' },
    });
    expectError(
      await s.request('POST', '/api/v1/devices', {
        session: bearer(device.body.token),
        body: { name: 'Child', replicaId: 'replica-d' },
      }),
      403,
      'DEVICE_TOKEN_NOT_ALLOWED',
    );
    // Refused before the body is parsed: a poisoned body learns nothing (403, not 400).
    expectError(
      await s.request('POST', '/api/v1/devices', {
        session: bearer(device.body.token),
        body: '{"__proto__":{}}',
      }),
      403,
      'DEVICE_TOKEN_NOT_ALLOWED',
    );
  });

  it("binds a replica id to one user's device; the same user signing in again replaces it", async () => {
    const first = await s.request('POST', '/api/v1/devices', {
      session: editor,
      body: { name: 'Tower', replicaId: 'replica-e' },
    });
    expectError(
      await s.request('POST', '/api/v1/devices', {
        session: other,
        body: { name: 'Thief', replicaId: 'replica-e' },
      }),
      409,
      'REPLICA_ID_TAKEN',
    );
    const again = await s.request('POST', '/api/v1/devices', {
      session: editor,
      body: { name: 'Tower', replicaId: 'replica-e' },
    });
    expect(again.status).toBe(201);
    expectError(
      await s.request('GET', '/api/v1/appauth', { session: bearer(first.body.token) }),
      401,
      'DEVICE_REVOKED',
    );
    expect(
      (await s.request('GET', '/api/v1/appauth', { session: bearer(again.body.token) })).status,
    ).toBe(200);
  });

  it('signing out with a device token revokes that device only; a sweep keeps devices', async () => {
    const kept = await s.request('POST', '/api/v1/devices', {
      session: editor,
      body: { name: 'Kept', replicaId: 'replica-k' },
    });
    const leaving = await s.request('POST', '/api/v1/devices', {
      session: editor,
      body: { name: 'Leaving', replicaId: 'replica-l' },
    });
    const signedOut = await s.request('DELETE', '/api/v1/appauth', {
      session: bearer(leaving.body.token),
    });
    expect(signedOut.status).toBe(204);
    expectError(
      await s.request('GET', '/api/v1/appauth', { session: bearer(leaving.body.token) }),
      401,
      'DEVICE_REVOKED',
    );
    await s.app.sessions.sweepExpired();
    expect(
      (await s.request('GET', '/api/v1/appauth', { session: bearer(kept.body.token) })).status,
    ).toBe(200);
    const listed = await s.request('GET', '/api/v1/devices', { session: editor });
    expect(listed.body.devices.map((d: { replicaId: string }) => d.replicaId)).toContain(
      'replica-k',
    );
    expect(listed.body.devices.map((d: { replicaId: string }) => d.replicaId)).not.toContain(
      'replica-l',
    );
  });

  it("ends a device token on its user's password reset, role change and deletion", async () => {
    await s.userSession('dev-temp', 'editor', ['*']);
    const newDevice = async (replicaId: string) => {
      const session = await s.signIn('dev-temp', 'dev-temp-password');
      const device = await s.request('POST', '/api/v1/devices', {
        session,
        body: { name: 'Temp', replicaId },
      });
      expect(device.status).toBe(201);
      const token = bearer(device.body.token);
      expect((await s.request('GET', '/api/v1/changes', { session: token })).status).toBe(200);
      return token;
    };
    const expectRevoked = async (token: string) =>
      expectError(
        await s.request('GET', '/api/v1/changes', { session: token }),
        401,
        'DEVICE_REVOKED',
      );

    let token = await newDevice('replica-t');
    // A change of the categories alone keeps it.
    await s.request('PUT', '/api/v1/users/dev-temp', { body: { allowEdit: ['Interior'] } });
    expect((await s.request('GET', '/api/v1/changes', { session: token })).status).toBe(200);
    await s.request('PUT', '/api/v1/users/dev-temp', { body: { password: 'dev-temp-password' } });
    await expectRevoked(token);

    token = await newDevice('replica-t');
    await s.request('PUT', '/api/v1/users/dev-temp', { body: { role: 'admin' } });
    await expectRevoked(token);

    token = await newDevice('replica-t');
    await s.request('DELETE', '/api/v1/users/dev-temp');
    await expectRevoked(token);
  });
});

describe('a device token is for sync only (DESIGN §2, §10)', () => {
  let s: TestServer;
  let adminToken: string;
  beforeAll(async () => {
    s = await startTestServer();
    const device = await s.request('POST', '/api/v1/devices', {
      body: { name: 'Admin laptop', replicaId: 'replica-admin' },
    });
    adminToken = `Bearer ${device.body.token}`;
  });
  afterAll(() => s.close());

  it('reaches what a replica calls: feed, blobs, mutations, conflicts, its own session', async () => {
    const session = adminToken;
    const sha = 'a'.repeat(64);
    expect((await s.request('GET', '/api/v1/changes?since=0', { session })).status).toBe(200);
    const missing = await s.request('POST', '/api/v1/blobs/missing', {
      session,
      body: { sha256: [sha] },
    });
    expect(missing.body).toEqual({ missing: [sha] });
    expect((await s.request('HEAD', `/api/v1/blobs/${sha}`, { session })).status).toBe(404);
    expectError(await s.request('GET', `/api/v1/blobs/${sha}`, { session }), 404, 'BLOB_NOT_FOUND');
    const pushed = await s.request('POST', '/api/v1/sync/mutations', {
      session,
      body: { replicaId: 'replica-admin', mutations: [] },
    });
    expect(pushed.status).toBe(200);
    expect((await s.request('GET', '/api/v1/conflicts', { session })).status).toBe(200);
    expect((await s.request('GET', '/api/v1/appauth', { session })).status).toBe(200);
  });

  it("an admin's device token cannot manage users, portfolios or devices: 403 before the body", async () => {
    const session = adminToken;
    const refused: Array<[string, string, unknown?]> = [
      ['GET', '/api/v1/users'],
      ['POST', '/api/v1/users', { username: 'intruder', password: 'intruder-pw', role: 'admin' }],
      ['POST', '/api/v1/users', 'not json at all'],
      ['PUT', '/api/v1/users/admin', { password: 'taken-over-1' }],
      ['DELETE', '/api/v1/users/admin'],
      ['GET', '/api/v1/portfolio'],
      ['POST', '/api/v1/portfolio', { projectTitle: 'x' }],
      ['GET', '/api/v1/devices'],
      ['POST', '/api/v1/devices', { name: 'Child', replicaId: 'replica-child' }],
      ['PUT', '/api/v1/sync/config', { hubUrl: 'http://x', username: 'a', password: 'b' }],
    ];
    for (const [method, path, body] of refused) {
      const answer = await s.request(method, path, { session, body });
      expectError(answer, 403, 'DEVICE_TOKEN_NOT_ALLOWED');
    }
    // Nothing changed: the admin's password still works, no user was made.
    expect(await s.signIn('admin', 'admin-password-1')).toBeTruthy();
    expectError(await s.request('GET', '/api/v1/users/intruder'), 404, 'USER_NOT_FOUND');
  });

  it('signs itself out: the token ends, the device is revoked', async () => {
    const device = await s.request('POST', '/api/v1/devices', {
      body: { name: 'Leaving', replicaId: 'replica-leaving' },
    });
    const token = `Bearer ${device.body.token}`;
    expect((await s.request('DELETE', '/api/v1/appauth', { session: token })).status).toBe(204);
    expectError(
      await s.request('GET', '/api/v1/changes', { session: token }),
      401,
      'DEVICE_REVOKED',
    );
  });
});

describe('a device token unused too long ends (DESIGN §10)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ auth: { deviceIdleMs: 1_500 } });
  });
  afterAll(() => s.close());

  const device = async (replicaId: string) => {
    const created = await s.request('POST', '/api/v1/devices', {
      body: { name: replicaId, replicaId },
    });
    return `Bearer ${created.body.token}`;
  };

  it('keeps a device in use, ends one left idle, at its next use or by the sweep', async () => {
    const used = await device('replica-used');
    const idle = await device('replica-idle');
    const swept = await device('replica-swept');
    for (let i = 0; i < 4; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect((await s.request('GET', '/api/v1/changes', { session: used })).status).toBe(200);
    }
    const answer = expectError(
      await s.request('GET', '/api/v1/changes', { session: idle }),
      401,
      'DEVICE_REVOKED',
    );
    expect(answer.message).toMatch(/not used for a long time/);
    await s.app.sessions.sweepExpired();
    const listed = await s.request('GET', '/api/v1/devices');
    expect(listed.body.devices.map((d: { replicaId: string }) => d.replicaId)).toEqual([
      'replica-used',
    ]);
    expectError(
      await s.request('GET', '/api/v1/changes', { session: swept }),
      401,
      'DEVICE_REVOKED',
    );
    expectError(
      await s.request('GET', '/api/v1/changes', { session: idle }),
      401,
      'DEVICE_REVOKED',
    );
  });
});
