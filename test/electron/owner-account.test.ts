import { rm } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OWNER_USERNAME, OwnerSessions, ensureOwner } from '../../electron/main/owner-account';
import { buildApp } from '../../server/app';
import { FAST_AUTH, makeTempDir } from '../helpers/test-server';
import { buildDesktopApp } from './helpers';

describe('local owner', () => {
  let dataDir: string;
  let app: FastifyInstance;
  let url: string;
  beforeEach(async () => {
    dataDir = await makeTempDir('portfolio-owner-');
  });
  afterEach(async () => {
    await app?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  async function start(build: () => Promise<FastifyInstance>) {
    app = await build();
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  }

  const me = (sessionId: string) =>
    fetch(`${url}/api/v1/appauth`, { headers: { authorization: sessionId } });

  it('is the only account of a new data folder: an admin of everything', async () => {
    await start(() => buildDesktopApp(dataDir));
    expect(await ensureOwner(app.shell)).toBe(OWNER_USERNAME);
    const users = await app.userService.list();
    expect(users.map((user) => [user.username, user.role, user.allowEdit])).toEqual([
      ['owner', 'admin', ['*']],
    ]);
  });

  it('signs the window in without a password, reusing a valid session', async () => {
    await start(() => buildDesktopApp(dataDir));
    const sessions = new OwnerSessions(app.shell, await ensureOwner(app.shell));
    const [first, concurrent] = await Promise.all([sessions.get(), sessions.get()]);
    expect(concurrent.sessionId).toBe(first.sessionId);
    expect(first.username).toBe('owner');
    expect(first.expiredDate).toBeGreaterThan(first.createdDate);
    const response = await me(first.sessionId);
    expect(response.status).toBe(200);
    expect(((await response.json()) as any).user).toMatchObject({
      username: 'owner',
      role: 'admin',
    });
    expect((await sessions.get()).sessionId).toBe(first.sessionId);
  });

  it('can set a password for LAN sign-in; the window gets a fresh session afterwards', async () => {
    await start(() => buildDesktopApp(dataDir));
    const sessions = new OwnerSessions(app.shell, await ensureOwner(app.shell));
    const before = await sessions.get();
    // What the Settings screen does: PUT /api/v1/users/{owner} with the owner's own session.
    const changed = await fetch(`${url}/api/v1/users/owner`, {
      method: 'PUT',
      headers: { authorization: before.sessionId, 'content-type': 'application/json' },
      body: JSON.stringify({ password: 'a new owner password' }),
    });
    expect(changed.status).toBe(200);
    // A password change ends the owner's sessions ...
    expect((await me(before.sessionId)).status).toBe(401);
    // ... and the shell hands out a new one without asking.
    const after = await sessions.get();
    expect(after.sessionId).not.toBe(before.sessionId);
    expect((await me(after.sessionId)).status).toBe(200);
    // From another computer, the owner signs in with the password.
    const signIn = await fetch(`${url}/api/v1/appauth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'owner', password: 'a new owner password' }),
    });
    expect(signIn.status).toBe(200);
  });

  it('joins a folder made by a headless server, leaving its admin alone', async () => {
    await start(() =>
      buildApp({
        dataDir,
        auth: FAST_AUTH,
        bootstrapAdmin: { username: 'admin', password: 'admin-password-1' },
      }),
    );
    await app.userService.create({
      username: 'owner',
      password: 'viewer-password',
      role: 'viewer',
    });
    await ensureOwner(app.shell);
    expect(await app.userService.get('owner')).toMatchObject({ role: 'admin', allowEdit: ['*'] });
    expect((await app.userService.get('admin')).role).toBe('admin');
    await ensureOwner(app.shell); // idempotent
    expect(await app.userService.list()).toHaveLength(2);
  });

  it('keeps the owner across restarts without creating another account', async () => {
    await start(() => buildDesktopApp(dataDir));
    await ensureOwner(app.shell);
    await app.close();
    await start(() => buildDesktopApp(dataDir));
    await ensureOwner(app.shell);
    expect((await app.userService.list()).map((user) => user.username)).toEqual(['owner']);
  });
});
