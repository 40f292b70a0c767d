import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadMultipart } from '../helpers/file-fixtures';
import { expectError } from '../helpers/error-body';
import { ADMIN, portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

/**
 * What a curator reads when the server refuses something: plain words in `message` and in each
 * detail, never a regular expression, Ajv's phrasing or a MIME type (issue 24, point 11).
 */

/** Traces of machine talk that must never reach a person. */
const MACHINE_TALK = /must NOT|must match pattern|\^\[|body\.|application\/|image\/|seconds/;

describe('refusals in plain words', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ auth: { signInRequestsPerMinute: 1000 } });
  });
  afterAll(() => s.close());

  it('says what a username may hold', async () => {
    const response = await s.request('POST', '/api/v1/users', {
      body: { username: 'Ann Smith', password: 'a-long-password', role: 'viewer' },
    });
    const error = expectError(response, 400, 'VALIDATION_FAILED');
    const words =
      'A username uses lower-case letters, digits, dots, dashes and underscores, and starts with a letter or digit.';
    expect(error.message).toBe(words);
    expect(error.details).toEqual([{ field: 'body.username', message: words }]);
  });

  it('says how long a password must be', async () => {
    const response = await s.request('POST', '/api/v1/users', {
      body: { username: 'ann', password: 'short', role: 'viewer' },
    });
    const error = expectError(response, 400, 'VALIDATION_FAILED');
    expect(error.message).toBe('A password has at least 8 characters.');
    expect(error.details).toEqual([
      { field: 'body.password', message: 'A password has at least 8 characters.' },
    ]);
  });

  it('names fields and limits in words, and the allowed roles once', async () => {
    const response = await s.request('POST', '/api/v1/users', {
      body: { username: 'ann', password: 'a-long-password', role: 'owner', extra: 1 },
    });
    const error = expectError(response, 400, 'VALIDATION_FAILED');
    const messages = error.details.map((detail: { message: string }) => detail.message);
    expect(messages).toEqual(
      expect.arrayContaining([
        'The role must be one of: viewer, editor, admin.',
        '"extra" is not a field the request takes.',
      ]),
    );
    expect(messages).toHaveLength(2);
    const portfolio = await s.request('POST', '/api/v1/portfolio', {
      body: portfolioBody({ projectTitle: 'x'.repeat(201), generalTag: ['ok', ' '] }),
    });
    const refused = expectError(portfolio, 400, 'VALIDATION_FAILED');
    expect(refused.details).toEqual(
      expect.arrayContaining([
        { field: 'body.projectTitle', message: 'The project title has at most 200 characters.' },
        {
          field: 'body.generalTag.1',
          message: 'Entry 2 of the tags cannot be empty or only spaces.',
        },
      ]),
    );
    for (const { message } of [error, refused, ...error.details, ...refused.details])
      expect(message).not.toMatch(MACHINE_TALK);
  });

  it('names a refused file by its kind, never its MIME type', async () => {
    const created = await s.request('POST', '/api/v1/portfolio', { body: portfolioBody() });
    // "MZ": the start of every Windows program.
    const program = Buffer.concat([Buffer.from('MZ'), Buffer.alloc(1022, 0x90)]);
    const response = await uploadMultipart(
      s,
      `/api/v1/portfolio/${created.body.portfolioId}/cover`,
      program,
      { filename: 'setup.exe', contentType: 'application/octet-stream' },
    );
    const error = expectError(response, 415, 'UNSUPPORTED_FILE_TYPE');
    expect(error.message).toBe(
      'A Windows program cannot be used as the cover; choose an image (JPEG, PNG, WebP, GIF, AVIF or TIFF).',
    );
  });
});

describe('a lockout after failed sign-ins', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({
      auth: { signInRequestsPerMinute: 1000, maxFailedSignIns: 5, failureWindowMs: 15 * 60_000 },
    });
  });
  afterAll(() => s.close());

  const signIn = (username: string, password: string) =>
    s.request('POST', '/api/v1/appauth', { body: { username, password }, session: null });

  async function lockOut(username: string) {
    for (let i = 0; i < 5; i++)
      expectError(await signIn(username, 'wrong-password'), 401, 'INVALID_CREDENTIALS');
  }

  it('says how long to wait in minutes', async () => {
    await s.userSession('waiting', 'viewer');
    await lockOut('waiting');
    const locked = expectError(
      await signIn('waiting', 'waiting-password'),
      429,
      'TOO_MANY_ATTEMPTS',
    );
    expect(locked.message).toBe(
      'Too many failed sign-ins; try again in 15 minutes, or ask an admin to unlock this user.',
    );
  });

  it('ends when an admin unlocks the user, who then signs in at once', async () => {
    await s.userSession('locked.out', 'editor', ['*']);
    await lockOut('locked.out');
    expectError(await signIn('locked.out', 'locked.out-password'), 429, 'TOO_MANY_ATTEMPTS');

    const unlocked = await s.request('POST', '/api/v1/users/locked.out/unlock');
    expect(unlocked.status).toBe(200);
    expect(unlocked.body).toEqual({ username: 'locked.out', wasLocked: true });
    expect((await signIn('locked.out', 'locked.out-password')).status).toBe(200);

    // Again: nothing was locked any more.
    const again = await s.request('POST', '/api/v1/users/locked.out/unlock');
    expect(again.body).toEqual({ username: 'locked.out', wasLocked: false });
  });

  it('is for admins only, and for users that exist', async () => {
    const editor = await s.userSession('not.admin', 'editor', ['*']);
    await lockOut(ADMIN.username);
    expectError(
      await s.request('POST', `/api/v1/users/${ADMIN.username}/unlock`, { session: editor }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await s.request('POST', `/api/v1/users/${ADMIN.username}/unlock`, { session: null }),
      401,
      'UNAUTHORIZED',
    );
    expectError(await signIn(ADMIN.username, ADMIN.password), 429, 'TOO_MANY_ATTEMPTS');
    expectError(await s.request('POST', '/api/v1/users/nobody/unlock'), 404, 'USER_NOT_FOUND');
  });
});
