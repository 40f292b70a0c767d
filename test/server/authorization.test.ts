import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures, uploadJson } from '../helpers/file-fixtures';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

/**
 * DESIGN §13: a caller who may not use an endpoint learns nothing about its schema. For every
 * route that changes something, a viewer and an editor outside the portfolio's category get 403
 * (never 400 with schema details) for a body that is not valid, and nothing changes.
 */
describe('authorization comes before validation', () => {
  let s: TestServer;
  let viewer: string;
  let outsider: string;
  let editor: string;
  let live: string;
  let trashed: string;
  let fileId: string;
  beforeAll(async () => {
    // A small body limit: a body that were read would answer 413.
    s = await startTestServer({ limits: { bodyBytes: 4096 } });
    viewer = await s.userSession('authz-viewer', 'viewer');
    outsider = await s.userSession('authz-outsider', 'editor', ['Garden']);
    editor = await s.userSession('authz-editor', 'editor', ['Interior']);
    live = await create();
    // Published, so the viewer sees it: the 403 is about the role, not visibility.
    await s.request('PUT', `/api/v1/portfolio/${live}`, {
      body: portfolioBody({ command: 'publish' }),
    });
    const added = await uploadJson(
      s,
      `/api/v1/portfolio/${live}/additionalDocument`,
      fixtures.text(),
      {
        filename: 'a.txt',
      },
    );
    fileId = added.body.fileID;
    trashed = await create();
    expect((await s.request('DELETE', `/api/v1/portfolio/${trashed}`)).status).toBe(204);
  });
  afterAll(() => s.close());

  async function create(): Promise<string> {
    const created = await s.request('POST', '/api/v1/portfolio', { body: portfolioBody() });
    return created.body.portfolioId;
  }

  const invalid = { projectTitle: 42, nope: true, description: 7, revision: 'x', role: 'king' };
  const routes = (): Array<[method: string, path: string, categoryChecked: boolean]> => [
    ['POST', '/api/v1/portfolio', false],
    ['PUT', `/api/v1/portfolio/${live}`, true],
    ['DELETE', `/api/v1/portfolio/${live}`, true],
    ['PUT', `/api/v1/portfolio/${live}/cover`, true],
    ['POST', `/api/v1/portfolio/${live}/draftingProcess`, true],
    ['POST', `/api/v1/portfolio/${live}/additionalDocument`, true],
    ['PATCH', `/api/v1/portfolio/${live}/files/${fileId}`, true],
    ['DELETE', `/api/v1/portfolio/${live}/files/${fileId}`, true],
    ['POST', `/api/v1/portfolio/${live}/revisions/1/restore`, true],
    ['POST', `/api/v1/trash/${trashed}/restore`, true],
    ['DELETE', `/api/v1/trash/${trashed}`, false],
    ['POST', '/api/v1/users', false],
    ['PUT', '/api/v1/users/authz-editor', false],
    ['DELETE', '/api/v1/users/authz-editor', false],
  ];

  async function snapshot() {
    const [detail, trash, users] = await Promise.all([
      s.request('GET', `/api/v1/portfolio/${live}`),
      s.request('GET', '/api/v1/trash'),
      s.request('GET', '/api/v1/users'),
    ]);
    return { detail: detail.body, trash: trash.body, users: users.body };
  }

  it('answers 403 to viewers on every changing route, whatever the body', async () => {
    const before = await snapshot();
    for (const [method, path] of routes()) {
      for (const body of [invalid, '{"not json', 'x'.repeat(64 * 1024)]) {
        const response = await s.request(method, path, { session: viewer, body });
        expect(response.status, `${method} ${path}`).toBe(403);
        expect(JSON.stringify(response.body.details), `${method} ${path}`).not.toMatch(/body\./);
      }
    }
    expect(await snapshot()).toEqual(before);
  });

  it('answers 403 to editors outside the category (and on admin-only routes), whatever the body', async () => {
    const before = await snapshot();
    for (const [method, path, categoryChecked] of routes()) {
      if (method === 'POST' && path === '/api/v1/portfolio') continue; // editors create anywhere
      for (const body of [invalid, '{"not json']) {
        const response = await s.request(method, path, { session: outsider, body });
        expect(response.status, `${method} ${path}`).toBe(403);
        expect(response.body.code).toBe(categoryChecked ? 'CATEGORY_NOT_ALLOWED' : 'FORBIDDEN');
      }
    }
    expect(await snapshot()).toEqual(before);
  });

  it('validates only once the caller is allowed: 400 naming the field', async () => {
    const put = await s.request('PUT', `/api/v1/portfolio/${live}`, {
      session: editor,
      body: { ...portfolioBody(), projectTitle: 42 },
    });
    expect(put.status).toBe(400);
    expect(put.body.code).toBe('VALIDATION_FAILED');
    expect(put.body.details.map((detail: { field: string }) => detail.field)).toContain(
      'body.projectTitle',
    );
    const patch = await s.request('PATCH', `/api/v1/portfolio/${live}/files/${fileId}`, {
      session: editor,
      body: { description: 7 },
    });
    expect(patch.status).toBe(400);
    expect(patch.body.details[0].field).toBe('body.description');
  });

  it('refuses a huge body to a role-only route without reading it', async () => {
    // Ten times the body limit: read, it would be a 413; refused first, it is a 403.
    const huge = JSON.stringify({ username: 'x'.repeat(40 * 1024) });
    for (const path of ['/api/v1/users', '/api/v1/portfolio']) {
      const response = await s.request('POST', path, { session: viewer, body: huge });
      expect(response.status, path).toBe(403);
      expect(response.body.code).toBe('FORBIDDEN');
    }
    const byEditor = await s.request('POST', '/api/v1/users', { session: editor, body: huge });
    expect(byEditor.status).toBe(403);
    const byAdmin = await s.request('POST', '/api/v1/users', { body: huge });
    expect(byAdmin.status).toBe(413);
  });

  it('answers 403 before validating the query of staff-only reads', async () => {
    for (const path of [
      '/api/v1/changes?since=abc',
      '/api/v1/trash?pageSize=0',
      `/api/v1/portfolio/${live}/revisions?pageSize=0`,
    ]) {
      const response = await s.request('GET', path, { session: viewer });
      expect(response.status, path).toBe(403);
    }
  });
});
