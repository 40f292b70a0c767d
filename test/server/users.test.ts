import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorFields, expectError } from '../helpers/error-body';
import { ADMIN, startTestServer, type TestServer } from '../helpers/test-server';

describe('users API', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ auth: { signInRequestsPerMinute: 1000 } });
  });
  afterAll(() => s.close());

  const noSecrets = (body: unknown) => {
    const text = JSON.stringify(body);
    expect(text).not.toContain('passwordHash');
    expect(text).not.toContain('scrypt');
    expect(text).not.toContain('password');
  };

  it('creates a user (201) and answers it without the password hash', async () => {
    const before = Date.now();
    const created = await s.request('POST', '/api/v1/users', {
      body: { username: 'ed.one', password: 'ed-one-password', role: 'editor', allowEdit: ['Art'] },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      username: 'ed.one',
      role: 'editor',
      allowEdit: ['Art'],
      createdTime: expect.any(Number),
      modifiedTime: expect.any(Number),
    });
    expect(created.body.createdTime).toBeGreaterThanOrEqual(before);
    noSecrets(created.body);

    const one = await s.request('GET', '/api/v1/users/ed.one');
    expect(one.status).toBe(200);
    expect(one.body).toEqual(created.body);
    const all = await s.request('GET', '/api/v1/users');
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(all.body.lists.length);
    expect(all.body.lists.map((u: { username: string }) => u.username)).toEqual(
      expect.arrayContaining(['admin', 'ed.one']),
    );
    noSecrets(all.body);
    // allowEdit defaults to none.
    const bare = await s.request('POST', '/api/v1/users', {
      body: { username: 'bare', password: 'bare-password', role: 'viewer' },
    });
    expect(bare.body.allowEdit).toEqual([]);
    // The new user can sign in.
    expect(await s.signIn('ed.one', 'ed-one-password')).toBeTruthy();
  });

  it('answers 409 for a taken username and keeps the first user', async () => {
    await s.request('POST', '/api/v1/users', {
      body: { username: 'taken', password: 'first-password', role: 'viewer' },
    });
    const again = await s.request('POST', '/api/v1/users', {
      body: { username: 'taken', password: 'second-password', role: 'admin' },
    });
    expectError(again, 409, 'USERNAME_TAKEN');
    expect((await s.request('GET', '/api/v1/users/taken')).body.role).toBe('viewer');
    expect(await s.signIn('taken', 'first-password')).toBeTruthy();
  });

  it('rejects bad bodies with 400 naming the field, and creates nothing', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        { username: 'u-extra', password: 'long-enough', role: 'viewer', isRoot: true },
        'body.isRoot',
      ],
      [{ username: 'u-nopass', role: 'viewer' }, 'body.password'],
      [{ username: 'u-short', password: 'short', role: 'viewer' }, 'body.password'],
      [{ username: 'u-role', password: 'long-enough', role: 'owner' }, 'body.role'],
      [{ username: 'Upper', password: 'long-enough', role: 'viewer' }, 'body.username'],
      [{ username: 'ab', password: 'long-enough', role: 'viewer' }, 'body.username'],
      [
        { username: 'u-allow', password: 'long-enough', role: 'editor', allowEdit: 'Art' },
        'body.allowEdit',
      ],
      [{ username: 'u'.repeat(65), password: 'long-enough', role: 'viewer' }, 'body.username'],
    ];
    for (const [body, field] of cases) {
      const response = await s.request('POST', '/api/v1/users', { body });
      expectError(response, 400, 'VALIDATION_FAILED');
      expect(errorFields(response)).toContain(field);
      if (typeof body.username === 'string' && body.username.length <= 64) {
        const lookup = await s.request('GET', `/api/v1/users/${body.username}`);
        expect(lookup.status).toBe(404);
      }
    }
    const updates: Array<[Record<string, unknown>, string]> = [
      [{}, 'body'],
      [{ role: 'editor', username: 'renamed' }, 'body.username'],
      [{ password: 'short' }, 'body.password'],
    ];
    for (const [body, field] of updates) {
      const response = await s.request('PUT', '/api/v1/users/ed.one', { body });
      expectError(response, 400, 'VALIDATION_FAILED');
      expect(errorFields(response).some((f) => f.startsWith(field))).toBe(true);
    }
  });

  it('answers 404 for an unknown user on GET, PUT and DELETE', async () => {
    expectError(await s.request('GET', '/api/v1/users/ghost'), 404, 'USER_NOT_FOUND');
    expectError(
      await s.request('PUT', '/api/v1/users/ghost', { body: { role: 'viewer' } }),
      404,
      'USER_NOT_FOUND',
    );
    expectError(await s.request('DELETE', '/api/v1/users/ghost'), 404, 'USER_NOT_FOUND');
    expect((await s.request('GET', '/api/v1/users/ghost')).status).toBe(404);
  });

  it('is admin-only: editors and viewers get 403 and change nothing', async () => {
    const editor = await s.userSession('plain.editor', 'editor', ['*']);
    const viewer = await s.userSession('plain.viewer', 'viewer');
    for (const session of [editor, viewer]) {
      const attempts = [
        s.request('GET', '/api/v1/users', { session }),
        s.request('GET', '/api/v1/users/admin', { session }),
        s.request('POST', '/api/v1/users', {
          session,
          body: { username: 'sneaky', password: 'sneaky-password', role: 'admin' },
        }),
        s.request('PUT', '/api/v1/users/plain.viewer', { session, body: { role: 'admin' } }),
        s.request('PUT', '/api/v1/users/admin', { session, body: { password: 'new-password-1' } }),
        s.request('DELETE', '/api/v1/users/admin', { session }),
      ];
      for (const response of await Promise.all(attempts)) expectError(response, 403, 'FORBIDDEN');
    }
    expectError(await s.request('GET', '/api/v1/users/sneaky'), 404, 'USER_NOT_FOUND');
    expect((await s.request('GET', '/api/v1/users/plain.viewer')).body.role).toBe('viewer');
    expect(await s.signIn(ADMIN.username, ADMIN.password)).toBeTruthy();
  });

  it('a password change ends all of the user’s sessions; the new password works', async () => {
    const first = await s.userSession('pw.user', 'editor');
    const second = await s.signIn('pw.user', 'pw.user-password');
    const changed = await s.request('PUT', '/api/v1/users/pw.user', {
      body: { password: 'brand-new-password' },
    });
    expect(changed.status).toBe(200);
    noSecrets(changed.body);
    for (const session of [first, second]) {
      expectError(await s.request('GET', '/api/v1/appauth', { session }), 401, 'UNAUTHORIZED');
    }
    const old = await s.request('POST', '/api/v1/appauth', {
      body: { username: 'pw.user', password: 'pw.user-password' },
      session: null,
    });
    expectError(old, 401, 'INVALID_CREDENTIALS');
    expect(await s.signIn('pw.user', 'brand-new-password')).toBeTruthy();
    // The admin's own session is untouched.
    expect((await s.request('GET', '/api/v1/appauth')).status).toBe(200);
  });

  it('a role change ends the user’s sessions; an allowEdit change applies at once', async () => {
    const session = await s.userSession('role.user', 'editor', ['Art']);
    const allow = await s.request('PUT', '/api/v1/users/role.user', {
      body: { allowEdit: ['Art', 'Garden'] },
    });
    expect(allow.status).toBe(200);
    expect(allow.body.allowEdit).toEqual(['Art', 'Garden']);
    const me = await s.request('GET', '/api/v1/appauth', { session });
    expect(me.status).toBe(200);
    expect(me.body.user.allowEdit).toEqual(['Art', 'Garden']);

    const demoted = await s.request('PUT', '/api/v1/users/role.user', { body: { role: 'viewer' } });
    expect(demoted.status).toBe(200);
    expect(demoted.body.role).toBe('viewer');
    expectError(await s.request('GET', '/api/v1/appauth', { session }), 401, 'UNAUTHORIZED');
    const again = await s.signIn('role.user', 'role.user-password');
    const create = await s.request('POST', '/api/v1/portfolio', {
      session: again,
      body: { memberBarcode: 'M1', category: 'Art', projectTitle: 't', projectDetail: 'd' },
    });
    expectError(create, 403, 'FORBIDDEN');
  });

  it('deleting a user ends its sessions and its sign-in', async () => {
    const session = await s.userSession('gone.user', 'editor');
    const deleted = await s.request('DELETE', '/api/v1/users/gone.user');
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBe('');
    expectError(await s.request('GET', '/api/v1/appauth', { session }), 401, 'UNAUTHORIZED');
    const signIn = await s.request('POST', '/api/v1/appauth', {
      body: { username: 'gone.user', password: 'gone.user-password' },
      session: null,
    });
    expectError(signIn, 401, 'INVALID_CREDENTIALS');
    expectError(await s.request('GET', '/api/v1/users/gone.user'), 404, 'USER_NOT_FOUND');
    // The name is free again.
    const recreated = await s.request('POST', '/api/v1/users', {
      body: { username: 'gone.user', password: 'another-password', role: 'viewer' },
    });
    expect(recreated.status).toBe(201);
  });
});

describe('last-admin protection', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  it('refuses to delete or demote the last admin (409), and allows it while another admin exists', async () => {
    expectError(await s.request('DELETE', '/api/v1/users/admin'), 409, 'LAST_ADMIN');
    for (const role of ['editor', 'viewer']) {
      expectError(
        await s.request('PUT', '/api/v1/users/admin', { body: { role } }),
        409,
        'LAST_ADMIN',
      );
    }
    const still = await s.request('GET', '/api/v1/users/admin');
    expect(still.body.role).toBe('admin');
    expect((await s.request('GET', '/api/v1/appauth')).status).toBe(200);
    // Re-saving the role "admin" is no demotion.
    expect(
      (await s.request('PUT', '/api/v1/users/admin', { body: { role: 'admin' } })).status,
    ).toBe(200);

    const second = await s.userSession('second.admin', 'admin');
    const demote = await s.request('PUT', '/api/v1/users/admin', { body: { role: 'editor' } });
    expect(demote.status).toBe(200);
    // Now second.admin is the last one: it cannot remove itself either way.
    expectError(
      await s.request('DELETE', '/api/v1/users/second.admin', { session: second }),
      409,
      'LAST_ADMIN',
    );
    expectError(
      await s.request('PUT', '/api/v1/users/second.admin', {
        session: second,
        body: { role: 'viewer' },
      }),
      409,
      'LAST_ADMIN',
    );
    // Deleting a non-last admin works.
    await s.request('PUT', '/api/v1/users/admin', { session: second, body: { role: 'admin' } });
    const deleted = await s.request('DELETE', '/api/v1/users/admin', { session: second });
    expect(deleted.status).toBe(204);
    expectError(
      await s.request('DELETE', '/api/v1/users/second.admin', { session: second }),
      409,
      'LAST_ADMIN',
    );
  });
});
