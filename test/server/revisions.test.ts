import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { download, fixtures, uploadMultipart } from '../helpers/file-fixtures';
import { errorFields, expectError } from '../helpers/error-body';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

describe('history: revisions and restore (DESIGN §9)', () => {
  let s: TestServer;
  let viewer: string;
  let outsider: string;
  let editor: string;
  beforeAll(async () => {
    s = await startTestServer();
    viewer = await s.userSession('hist-viewer', 'viewer');
    outsider = await s.userSession('hist-outsider', 'editor', ['Garden']);
    editor = await s.userSession('hist-editor', 'editor', ['Interior']);
  });
  afterAll(() => s.close());

  async function create(overrides: Record<string, unknown> = {}): Promise<string> {
    const created = await s.request('POST', '/api/v1/portfolio', {
      body: portfolioBody(overrides),
    });
    expect(created.status).toBe(201);
    return created.body.portfolioId;
  }
  const put = (id: string, body: Record<string, unknown>, session?: string) =>
    s.request('PUT', `/api/v1/portfolio/${id}`, {
      body: portfolioBody(body),
      ...(session ? { session } : {}),
    });
  const detail = async (id: string) => (await s.request('GET', `/api/v1/portfolio/${id}`)).body;

  it('lists kept revisions newest first: who, when, command and changed fields', async () => {
    const id = await create();
    await put(id, { projectTitle: 'Second' }, editor);
    await put(id, { projectTitle: 'Second', command: 'publish' });
    const response = await s.request('GET', `/api/v1/portfolio/${id}/revisions`, {
      session: editor,
    });
    expect(response.status).toBe(200);
    expect(response.body.total).toBe(3);
    expect(response.body.nextPageToken).toBe('');
    const [third, second, first] = response.body.revisions;
    expect(Object.keys(third).sort()).toEqual(
      ['changedFields', 'command', 'modifiedBy', 'modifiedTime', 'revision'].sort(),
    );
    expect(third).toMatchObject({ revision: 3, modifiedBy: 'admin', command: 'publish' });
    expect(third.changedFields).toEqual(['published']);
    expect(second).toMatchObject({ revision: 2, modifiedBy: 'hist-editor', command: 'save' });
    expect(second.changedFields).toEqual(['projectTitle']);
    expect(first).toMatchObject({ revision: 1, modifiedBy: 'admin', command: 'create' });
    expect(first.changedFields).toContain('projectTitle');
  });

  it('pages the list by pageSize with a nextPageToken', async () => {
    const id = await create();
    for (let index = 2; index <= 5; index++) await put(id, { projectTitle: `v${index}` });
    const seen: number[] = [];
    let token = '';
    do {
      const query = `pageSize=2${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`;
      const page = await s.request('GET', `/api/v1/portfolio/${id}/revisions?${query}`);
      expect(page.status).toBe(200);
      expect(page.body.total).toBe(5);
      expect(page.body.revisions.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.revisions.map((entry: { revision: number }) => entry.revision));
      token = page.body.nextPageToken;
    } while (token);
    expect(seen).toEqual([5, 4, 3, 2, 1]);
    const bad = await s.request('GET', `/api/v1/portfolio/${id}/revisions?pageToken=garbage`);
    expectError(bad, 400, 'INVALID_PAGE_TOKEN');
    const zero = await s.request('GET', `/api/v1/portfolio/${id}/revisions?pageSize=0`);
    expectError(zero, 400, 'VALIDATION_FAILED');
  });

  it('answers one revision in the detail shape as it was then, without data', async () => {
    const id = await create({ projectTitle: 'Original' });
    await put(id, { projectTitle: 'Changed' });
    const response = await s.request('GET', `/api/v1/portfolio/${id}/revisions/1`);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      portfolioId: id,
      projectTitle: 'Original',
      oboutProject: '',
      revision: 1,
      createdBy: 'admin',
      modifiedBy: 'admin',
    });
    expect(Object.keys(response.body).sort()).toEqual(Object.keys(await detail(id)).sort());
    expectError(
      await s.request('GET', `/api/v1/portfolio/${id}/revisions/9`),
      404,
      'REVISION_NOT_FOUND',
    );
    expectError(
      await s.request('GET', `/api/v1/portfolio/${id}/revisions/0`),
      400,
      'VALIDATION_FAILED',
    );
  });

  it('restores a revision whose files were replaced: a new revision, the old bytes again', async () => {
    const id = await create({ projectTitle: 'With a cover' });
    const png = await fixtures.png();
    const first = await uploadMultipart(s, `/api/v1/portfolio/${id}/cover`, png);
    expect(first.status).toBe(200);
    const withPng = (await detail(id)).revision;
    const webp = await uploadMultipart(s, `/api/v1/portfolio/${id}/cover`, await fixtures.webp());
    expect(webp.status).toBe(200);
    await put(id, { projectTitle: 'Renamed' });
    await s.app.blobStore.idle();
    // The replaced cover is gone from the portfolio...
    const gone = await download(s, `/api/v1/portfolio/${id}/files/${first.body.fileId}`);
    expect(gone.status).toBe(404);
    const before = await detail(id);

    const restored = await s.request(
      'POST',
      `/api/v1/portfolio/${id}/revisions/${withPng}/restore`,
      { body: { revision: before.revision } },
    );
    expect(restored.status).toBe(200);
    expect(restored.headers.get('etag')).toBe(`"${before.revision + 1}"`);
    expect(restored.body).toMatchObject({
      portfolioId: id,
      projectTitle: 'With a cover',
      revision: before.revision + 1,
    });
    expect(restored.body).toHaveProperty('modifiedTime');
    // ...and comes back with the revision: the same file id, the same bytes.
    const after = await detail(id);
    expect(after.cover.fileId).toBe(first.body.fileId);
    const again = await download(s, `/api/v1/portfolio/${id}/files/${first.body.fileId}`);
    expect(again.status).toBe(200);
    expect(again.bytes.equals(png)).toBe(true);
    const history = await s.request('GET', `/api/v1/portfolio/${id}/revisions?pageSize=1`);
    expect(history.body.revisions[0]).toMatchObject({
      revision: before.revision + 1,
      command: 'restore',
    });
    expect(history.body.revisions[0].changedFields.sort()).toEqual(['cover', 'projectTitle']);
  });

  it('refuses stale, unknown and unauthorized restores, and changes nothing', async () => {
    const id = await create();
    await put(id, { projectTitle: 'Two' });
    const before = await detail(id);
    const path = `/api/v1/portfolio/${id}/revisions/1/restore`;

    const stale = await s.request('POST', path, { body: { revision: 1 } });
    expectError(stale, 409, 'REVISION_CONFLICT');
    expect(errorFields(stale)).toContain('body.revision');
    const staleHeader = await s.request('POST', path, { headers: { 'if-match': '"1"' } });
    expectError(staleHeader, 409, 'REVISION_CONFLICT');
    expectError(
      await s.request('POST', `/api/v1/portfolio/${id}/revisions/7/restore`),
      404,
      'REVISION_NOT_FOUND',
    );
    expectError(
      await s.request('POST', `/api/v1/portfolio/nope/revisions/1/restore`),
      404,
      'PORTFOLIO_NOT_FOUND',
    );
    const badBody = await s.request('POST', path, { body: { revision: 'x', extra: 1 } });
    expectError(badBody, 400, 'VALIDATION_FAILED');
    expect(errorFields(badBody)).toEqual(expect.arrayContaining(['body.revision', 'body.extra']));
    // Viewers and editors outside the category: 403 even with a body that is not valid.
    for (const session of [viewer, outsider]) {
      const refused = await s.request('POST', path, { session, body: { revision: 'x' } });
      expect(refused.status).toBe(403);
      expect(refused.body.details.map((detail: { field?: string }) => detail.field)).not.toContain(
        'body.revision',
      );
    }
    expectError(
      await s.request('GET', `/api/v1/portfolio/${id}/revisions`, { session: viewer }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await s.request('GET', `/api/v1/portfolio/${id}/revisions/1`, { session: viewer }),
      403,
      'FORBIDDEN',
    );
    expect(await detail(id)).toEqual(before);
  });

  it('needs an admin to restore admin-only fields an editor may not set', async () => {
    const id = await create();
    await put(id, { staffPick: true, certificateDesc: '<p>Gold</p>' });
    await put(id, { staffPick: false, certificateDesc: '' });
    const before = await detail(id);
    const byEditor = await s.request('POST', `/api/v1/portfolio/${id}/revisions/2/restore`, {
      session: editor,
    });
    expectError(byEditor, 403, 'FORBIDDEN_FIELD');
    expect(await detail(id)).toEqual(before);
    const byAdmin = await s.request('POST', `/api/v1/portfolio/${id}/revisions/2/restore`);
    expect(byAdmin.status).toBe(200);
    expect(await detail(id)).toMatchObject({ staffPick: true, certificateDesc: '<p>Gold</p>' });
  });
});
