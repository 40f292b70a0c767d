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
    const stored = JSON.stringify([...s.app.userRepository.devices()]);
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
      'FORBIDDEN',
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

  it('keeps devices through a password reset and applies a role change at once; deleting the user revokes them', async () => {
    await s.userSession('dev-temp', 'editor', ['*']);
    const session = await s.signIn('dev-temp', 'dev-temp-password');
    const device = await s.request('POST', '/api/v1/devices', {
      session,
      body: { name: 'Temp', replicaId: 'replica-t' },
    });
    const token = bearer(device.body.token);
    await s.request('PUT', '/api/v1/users/dev-temp', { body: { password: 'another-password' } });
    expect((await s.request('GET', '/api/v1/changes', { session: token })).status).toBe(200);
    await s.request('PUT', '/api/v1/users/dev-temp', { body: { role: 'viewer' } });
    expectError(await s.request('GET', '/api/v1/changes', { session: token }), 403, 'FORBIDDEN');
    await s.request('DELETE', '/api/v1/users/dev-temp');
    expectError(
      await s.request('GET', '/api/v1/appauth', { session: token }),
      401,
      'DEVICE_REVOKED',
    );
  });
});
