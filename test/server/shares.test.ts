import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashShareToken } from '../../server/services/share-service';
import { expectError } from '../helpers/error-body';
import { fixtures, uploadMultipart } from '../helpers/file-fixtures';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

const DAY = 86_400_000;

describe('share links (DESIGN §15)', () => {
  let s: TestServer;
  let editor: string;
  let outsider: string;
  let viewer: string;
  let portfolioId: string;

  beforeAll(async () => {
    s = await startTestServer({ auth: { maxFailedSignIns: 3 } });
    editor = await s.userSession('share-editor', 'editor', ['Interior']);
    outsider = await s.userSession('share-outsider', 'editor', ['Garden']);
    viewer = await s.userSession('share-viewer', 'viewer');
    const created = await s.request('POST', '/api/v1/portfolio', {
      body: portfolioBody({
        memberBarcode: 'SECRET-BARCODE-7',
        projectTitle: 'Unpublished lake house',
        aboutProject: 'Timber by the water.',
        generalTag: ['timber', 'lake'],
      }),
    });
    portfolioId = created.body.portfolioId;
    await s.request('PUT', `/api/v1/portfolio/${portfolioId}`, {
      body: {
        ...portfolioBody({
          memberBarcode: 'SECRET-BARCODE-7',
          projectTitle: 'Unpublished lake house',
        }),
        certificateDesc: '<p>Awarded <strong>gold</strong></p>',
        staffPick: true,
      },
    });
    expect(
      (
        await uploadMultipart(s, `/api/v1/portfolio/${portfolioId}/cover`, await fixtures.jpeg(), {
          filename: 'cover.jpg',
          description: 'The lake side',
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await uploadMultipart(
          s,
          `/api/v1/portfolio/${portfolioId}/additionalDocument`,
          fixtures.pdf(),
          { filename: 'private-contract.pdf' },
        )
      ).status,
    ).toBe(201);
  });
  afterAll(() => s.close());

  const sharesPath = () => `/api/v1/portfolio/${portfolioId}/shares`;
  const createShare = (body: Record<string, unknown>, session?: string) =>
    s.request('POST', sharesPath(), { body: { expiresAt: Date.now() + DAY, ...body }, session });
  const open = (path: string, init: RequestInit = {}) => fetch(s.url + path, init);
  const postPassword = (path: string, password: string) =>
    open(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ password }).toString(),
    });

  it('lets an editor of the category make, list and revoke links; others get 403, before the body', async () => {
    const created = await createShare({ maxUses: 5 }, editor);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      shareId: expect.any(String),
      url: expect.stringMatching(/^\/s\/[A-Za-z0-9_-]{43}$/),
      maxUses: 5,
      uses: 0,
      hasPassword: false,
      state: 'active',
      createdBy: 'share-editor',
    });
    const listed = await s.request('GET', sharesPath(), { session: editor });
    expect(listed.status).toBe(200);
    expect(listed.body.shares.map((share: { shareId: string }) => share.shareId)).toContain(
      created.body.shareId,
    );
    expect(JSON.stringify(listed.body)).not.toContain(created.body.url.slice(3));

    // Authorization before validation: an invalid body still answers 403 to who may not share.
    const bad = { expiresAt: 'soon', extra: true };
    expectError(
      await s.request('POST', sharesPath(), { body: bad, session: viewer }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await s.request('POST', sharesPath(), { body: bad, session: outsider }),
      403,
      'CATEGORY_NOT_ALLOWED',
    );
    expectError(
      await s.request('GET', sharesPath(), { session: outsider }),
      403,
      'CATEGORY_NOT_ALLOWED',
    );
    expectError(
      await s.request('POST', sharesPath(), { body: bad, session: editor }),
      400,
      'VALIDATION_FAILED',
    );
    expectError(
      await createShare({ expiresAt: Date.now() - 1000 }, editor),
      400,
      'VALIDATION_FAILED',
    );
    expectError(await createShare({ password: 'ab' }, editor), 400, 'VALIDATION_FAILED');
    expectError(
      await s.request('GET', '/api/v1/portfolio/no-such-one/shares', { session: editor }),
      404,
      'PORTFOLIO_NOT_FOUND',
    );

    expect((await open(created.body.url)).status).toBe(200);
    const revoke = `${sharesPath()}/${created.body.shareId}`;
    expectError(
      await s.request('DELETE', revoke, { session: outsider }),
      403,
      'CATEGORY_NOT_ALLOWED',
    );
    expect((await s.request('DELETE', revoke, { session: editor })).status).toBe(204);
    expectError(await s.request('DELETE', revoke, { session: editor }), 404, 'SHARE_NOT_FOUND');
    const revoked = await open(created.body.url);
    expect(revoked.status).toBe(410);
    expect(await revoked.text()).toContain('This link has ended');
    expect((await s.request('GET', sharesPath())).body.shares).toEqual([]);
  });

  it('keeps only hashes of the token and the password', async () => {
    const created = await createShare({ password: 'open sesame' });
    const token = created.body.url.slice(3);
    const stored = await s.app.backend.shares.get(created.body.shareId);
    expect(stored).toMatchObject({ tokenHash: hashShareToken(token) });
    expect(stored!.passwordHash).toMatch(/^scrypt\$/);
    expect(JSON.stringify(stored)).not.toContain(token);
    expect(JSON.stringify(stored)).not.toContain('open sesame');
  });

  it('shows only the public fields and images, read-only, with strict headers', async () => {
    const created = await createShare({});
    const page = await open(created.body.url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('content-security-policy')).not.toMatch(/script-src|unsafe-inline/);
    expect(page.headers.get('set-cookie')).toBeNull();
    const html = await page.text();
    expect(html).toContain('Unpublished lake house');
    expect(html).toContain('Timber by the water.');
    expect(html).toContain('<strong>gold</strong>');
    expect(html).toContain('Staff pick');
    expect(html).not.toContain('<script');
    for (const secret of [
      'SECRET-BARCODE-7',
      'private-contract',
      'share-editor',
      'admin',
      'evision',
    ])
      expect(html).not.toContain(secret);

    const src = /<img src="([^"]+)"/.exec(html)![1]!.replaceAll('&amp;', '&');
    const image = await open(src);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/webp');
    expect((await image.arrayBuffer()).byteLength).toBeGreaterThan(0);
    // Another file, a changed signature or no signature: nothing.
    const cover = (await s.request('GET', `/api/v1/portfolio/${portfolioId}`)).body;
    const documentId = cover.additionalDocument[0].fileID;
    expect((await open(src.replace(/files\/[^?]+/, `files/${documentId}`))).status).toBe(404);
    expect((await open(src.replace(/sig=[^&]+/, `sig=${'A'.repeat(43)}`))).status).toBe(404);
    expect((await open(src.replace(/exp=\d+/, `exp=${Date.now() + DAY}`))).status).toBe(404);
    expect((await open(src.split('?')[0]!)).status).toBe(404);
    // Revoked: its images go too.
    await s.request('DELETE', `${sharesPath()}/${created.body.shareId}`);
    expect((await open(src)).status).toBe(404);
  });

  it('counts a use per page shown and answers 410 once used up or expired', async () => {
    const created = await createShare({ maxUses: 2 });
    expect((await open(created.body.url)).status).toBe(200);
    expect((await open(created.body.url)).status).toBe(200);
    expect((await open(created.body.url)).status).toBe(410);
    const listed = (await s.request('GET', sharesPath())).body.shares;
    expect(
      listed.find((share: { shareId: string }) => share.shareId === created.body.shareId),
    ).toMatchObject({ uses: 2, state: 'usedUp' });

    const soon = await createShare({ expiresAt: Date.now() + 400 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await open(soon.body.url)).status).toBe(410);
  });

  it('asks for a password without naming the portfolio, throttles wrong ones, then shows it', async () => {
    const created = await createShare({ password: 'open sesame' });
    const form = await open(created.body.url);
    expect(form.status).toBe(200);
    const formHtml = await form.text();
    expect(formHtml).toContain('type="password"');
    expect(formHtml).not.toContain('lake house');

    const wrong = await postPassword(created.body.url, 'not it');
    expect(wrong.status).toBe(401);
    const wrongHtml = await wrong.text();
    expect(wrongHtml).toContain('That password is not right');
    expect(wrongHtml).not.toContain('lake house');

    const right = await postPassword(created.body.url, 'open sesame');
    expect(right.status).toBe(200);
    expect(await right.text()).toContain('Unpublished lake house');

    // maxFailedSignIns is 3 here (a right password starts the count again): the third wrong
    // password blocks, and the right one then waits too.
    for (let attempt = 0; attempt < 3; attempt++)
      expect((await postPassword(created.body.url, 'nope')).status).toBe(401);
    const blocked = await postPassword(created.body.url, 'open sesame');
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await blocked.text()).not.toContain('lake house');
    const listed = (await s.request('GET', sharesPath())).body.shares;
    expect(
      listed.find((share: { shareId: string }) => share.shareId === created.body.shareId),
    ).toMatchObject({ uses: 1, hasPassword: true });
  });

  it('answers a 404 page for unknown tokens and path tricks, never the web app or the API', async () => {
    const raw = (path: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const url = new URL(s.url);
        const req = httpRequest(
          { host: url.hostname, port: url.port, path, headers: { accept: 'text/html' } },
          (res) => {
            let body = '';
            res.on('data', (chunk) => (body += chunk));
            res.on('end', () => resolve({ status: res.statusCode!, body }));
          },
        );
        req.on('error', reject);
        req.end();
      });
    for (const path of [
      '/s/' + 'A'.repeat(43),
      '/s/../api/v1/portfolio',
      '/s/%2e%2e%2fapi%2fv1%2fportfolio',
      '/s/abc%2Fdef',
      '/s/' + 'x'.repeat(5000),
      '/s',
      '/s/',
      '/s/a/b/c',
    ]) {
      const answer = await raw(path);
      expect(answer.status, path).toBe(404);
      expect(answer.body, path).toContain('This link does not work');
    }
  });
});
