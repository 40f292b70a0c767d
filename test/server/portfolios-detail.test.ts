import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorFields, expectError } from '../helpers/error-body';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

describe('GET /api/v1/portfolio/{id}', () => {
  let s: TestServer;
  let editor: string;
  let viewer: string;
  beforeAll(async () => {
    s = await startTestServer();
    editor = await s.userSession('editor', 'editor', []);
    viewer = await s.userSession('viewer', 'viewer');
  });
  afterAll(() => s.close());

  const get = (id: string, session?: string) =>
    s.request('GET', `/api/v1/portfolio/${id}`, { session });
  const create = async (overrides: Record<string, unknown> = {}) => {
    const response = await s.request('POST', '/api/v1/portfolio', {
      body: portfolioBody(overrides),
    });
    expect(response.status).toBe(201);
    return response.body;
  };
  const command = async (id: string, cmd: string) => {
    const response = await s.request('PUT', `/api/v1/portfolio/${id}`, {
      body: portfolioBody({ command: cmd }),
    });
    expect(response.status).toBe(200);
  };

  it('answers every field with the interface spellings (oboutProject, createdDate, fileID), and who made it', async () => {
    const created = await create({
      aboutProject: 'about',
      relativeCategory: ['R'],
      projectLanuching: 'soon',
      readyToBuy: 'no',
      occasion: ['O'],
      referenceStyling: 'S',
      generalTag: ['G'],
    });
    await s.request('PUT', `/api/v1/portfolio/${created.portfolioId}`, {
      body: portfolioBody({
        certificateByOrg: ['C'],
        certificateDesc: '<p>d</p>',
        staffPick: true,
      }),
    });
    const response = await get(created.portfolioId);
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe('"2"');
    expect(response.body).toEqual({
      portfolioId: created.portfolioId,
      memberBarcode: 'M0001',
      category: 'Interior',
      projectTitle: 'Lake house',
      cover: null,
      oboutProject: 'about',
      projectDetail: 'A timber house by the lake.',
      draftingProcess: [],
      projectLanuching: 'soon',
      readyToBuy: 'no',
      occasion: ['O'],
      referenceStyling: ['S'],
      generalTag: ['G'],
      additionalDocument: [],
      relativeCategory: ['R'],
      certificateByOrg: ['C'],
      certificateDesc: '<p>d</p>',
      staffPick: true,
      createdDate: created.createdTime,
      modifiedTime: expect.any(Number),
      published: false,
      active: true,
      revision: 2,
      createdBy: 'admin',
      modifiedBy: 'admin',
    });
    expect(response.body).not.toHaveProperty('aboutProject');
    expect(response.body).not.toHaveProperty('seq');
    expect(response.body).not.toHaveProperty('createdTime');
    expect(response.body.modifiedTime).toBeGreaterThanOrEqual(created.createdTime);
  });

  it('answers 404 for an unknown id and 400 for a malformed one', async () => {
    const missing = await get('does-not-exist');
    const error = expectError(missing, 404, 'PORTFOLIO_NOT_FOUND');
    expect(error.message).toContain('does-not-exist');
    const long = await get('x'.repeat(65));
    expectError(long, 400, 'VALIDATION_FAILED');
    expect(errorFields(long)).toContain('params.portfolioId');
  });

  it('needs a session (401)', async () => {
    const { portfolioId } = await create();
    expectError(await get(portfolioId, ''), 401, 'UNAUTHORIZED');
    expectError(
      await s.request('GET', `/api/v1/portfolio/${portfolioId}`, { session: null }),
      401,
      'UNAUTHORIZED',
    );
  });

  it('shows viewers only published and active portfolios; the rest are 404 to them', async () => {
    const { portfolioId: id } = await create();
    // Unpublished (the default).
    const hidden = await get(id, viewer);
    expectError(hidden, 404, 'PORTFOLIO_NOT_FOUND');
    // The 404 is the same as for an id that does not exist.
    const ghost = await get('ghost-id', viewer);
    expect(hidden.body.message.replace(id, '')).toBe(ghost.body.message.replace('ghost-id', ''));
    expect((await get(id, editor)).status).toBe(200);
    expect((await get(id)).status).toBe(200);

    await command(id, 'publish');
    const visible = await get(id, viewer);
    expect(visible.status).toBe(200);
    expect(visible.body).toMatchObject({ portfolioId: id, published: true, active: true });

    await command(id, 'deactivate'); // published but inactive
    expectError(await get(id, viewer), 404, 'PORTFOLIO_NOT_FOUND');
    expect((await get(id, editor)).body).toMatchObject({ published: true, active: false });

    await command(id, 'unpublish'); // neither
    expectError(await get(id, viewer), 404, 'PORTFOLIO_NOT_FOUND');
    await command(id, 'activate'); // active but unpublished
    expectError(await get(id, viewer), 404, 'PORTFOLIO_NOT_FOUND');
    await command(id, 'publish');
    expect((await get(id, viewer)).status).toBe(200);
  });
});
