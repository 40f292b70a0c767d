import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { download, fixtures, uploadMultipart } from '../helpers/file-fixtures';
import { expectError } from '../helpers/error-body';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

describe('delete, trash, restore and purge (DESIGN §9)', () => {
  let s: TestServer;
  let viewer: string;
  let outsider: string;
  let editor: string;
  beforeAll(async () => {
    s = await startTestServer();
    viewer = await s.userSession('trash-viewer', 'viewer');
    outsider = await s.userSession('trash-outsider', 'editor', ['Garden']);
    editor = await s.userSession('trash-editor', 'editor', ['Interior']);
  });
  afterAll(() => s.close());

  async function create(overrides: Record<string, unknown> = {}): Promise<string> {
    const created = await s.request('POST', '/api/v1/portfolio', {
      body: portfolioBody(overrides),
    });
    expect(created.status).toBe(201);
    return created.body.portfolioId;
  }
  const del = (id: string, options: { session?: string; headers?: Record<string, string> } = {}) =>
    s.request('DELETE', `/api/v1/portfolio/${id}`, options);
  const trashIds = async () =>
    (await s.request('GET', '/api/v1/trash?pageSize=1000')).body.lists.map(
      (item: { portfolioId: string }) => item.portfolioId,
    );

  it('deletes to the trash: 204, then 404 in detail and list, listed in the trash', async () => {
    const id = await create({ projectTitle: 'Going away' });
    const deleted = await del(id, { session: editor, headers: { 'if-match': '"1"' } });
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBe('');
    expectError(await s.request('GET', `/api/v1/portfolio/${id}`), 404, 'PORTFOLIO_NOT_FOUND');
    const list = await s.request('GET', `/api/v1/portfolio?filter=projectTitle:Going%20away`);
    expect(list.body.lists).toEqual([]);
    expectError(
      await s.request('PUT', `/api/v1/portfolio/${id}`, { body: portfolioBody() }),
      404,
      'PORTFOLIO_NOT_FOUND',
    );
    expectError(await del(id), 404, 'PORTFOLIO_NOT_FOUND');

    const trash = await s.request('GET', '/api/v1/trash', { session: editor });
    expect(trash.status).toBe(200);
    const item = trash.body.lists.find(
      (entry: { portfolioId: string }) => entry.portfolioId === id,
    );
    expect(item).toEqual({
      portfolioId: id,
      projectTitle: 'Going away',
      category: 'Interior',
      deletedTime: expect.any(Number),
      deletedBy: 'trash-editor',
      revision: 1,
      purgeTime: expect.any(Number),
    });
    // Due to leave the trash for good when the trash's 30 days are up (the default).
    expect(item.purgeTime - item.deletedTime).toBe(30 * 24 * 60 * 60 * 1000);
    expect(trash.body.total).toBeGreaterThanOrEqual(1);
    expect(trash.body).toHaveProperty('nextPageToken');
    // A trashed id is still taken: a new portfolio cannot reuse it.
    expectError(
      await s.request('POST', '/api/v1/portfolio', { body: portfolioBody({ portfolioId: id }) }),
      409,
      'ID_TAKEN',
    );
  });

  it('refuses stale, unauthorized and unknown deletes, and changes nothing', async () => {
    const id = await create();
    await s.request('PUT', `/api/v1/portfolio/${id}`, { body: portfolioBody({ readyToBuy: 'x' }) });
    const stale = await del(id, { headers: { 'if-match': '"1"' } });
    expectError(stale, 409, 'REVISION_CONFLICT');
    expectError(await del(id, { headers: { 'if-match': 'banana' } }), 400, 'VALIDATION_FAILED');
    expectError(await del(id, { session: viewer }), 403, 'FORBIDDEN');
    expectError(await del(id, { session: outsider }), 403, 'CATEGORY_NOT_ALLOWED');
    expectError(await del('no-such-id'), 404, 'PORTFOLIO_NOT_FOUND');
    const still = await s.request('GET', `/api/v1/portfolio/${id}`);
    expect(still.status).toBe(200);
    expect(still.body.revision).toBe(2);
    expect(await trashIds()).not.toContain(id);
  });

  it('restores from the trash with its files, at a new revision, in the detail shape', async () => {
    const id = await create({ projectTitle: 'Comes back' });
    const png = await fixtures.png();
    const cover = await uploadMultipart(s, `/api/v1/portfolio/${id}/cover`, png);
    expect((await del(id)).status).toBe(204);
    await s.app.blobStore.idle();

    const restored = await s.request('POST', `/api/v1/trash/${id}/restore`, { session: editor });
    expect(restored.status).toBe(200);
    expect(restored.headers.get('etag')).toBe('"3"');
    expect(restored.body).toMatchObject({
      portfolioId: id,
      projectTitle: 'Comes back',
      oboutProject: '',
      revision: 3,
      modifiedBy: 'trash-editor',
    });
    expect(restored.body.cover).toMatchObject({ fileId: cover.body.fileId });
    expect(restored.body.cover).not.toHaveProperty('data');
    const detail = await s.request('GET', `/api/v1/portfolio/${id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.revision).toBe(3);
    const bytes = await download(s, `/api/v1/portfolio/${id}/files/${cover.body.fileId}`);
    expect(bytes.bytes.equals(png)).toBe(true);
    expect(await trashIds()).not.toContain(id);
    expectError(await s.request('POST', `/api/v1/trash/${id}/restore`), 404, 'PORTFOLIO_NOT_FOUND');
  });

  it('refuses restores that are stale, unauthorized or of ids not in the trash', async () => {
    const id = await create();
    expect((await del(id)).status).toBe(204);
    const path = `/api/v1/trash/${id}/restore`;
    expectError(await s.request('POST', path, { body: { revision: 5 } }), 409, 'REVISION_CONFLICT');
    expectError(await s.request('POST', path, { body: { nope: 1 } }), 400, 'VALIDATION_FAILED');
    for (const session of [viewer, outsider]) {
      const refused = await s.request('POST', path, { session, body: { nope: 1 } });
      expect(refused.status).toBe(403);
    }
    expectError(await s.request('GET', '/api/v1/trash', { session: viewer }), 403, 'FORBIDDEN');
    expectError(
      await s.request('POST', '/api/v1/trash/never-was/restore'),
      404,
      'PORTFOLIO_NOT_FOUND',
    );
    expect(await trashIds()).toContain(id);
  });

  it('purges one trashed portfolio (admins only): gone from the trash, its bytes freed', async () => {
    const id = await create({ projectTitle: 'Purge me' });
    const bytes = await fixtures.webp();
    const cover = await uploadMultipart(s, `/api/v1/portfolio/${id}/cover`, bytes);
    expect(cover.status).toBe(200);
    expect((await del(id)).status).toBe(204);

    expectError(
      await s.request('DELETE', `/api/v1/trash/${id}`, { session: editor }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await s.request('DELETE', `/api/v1/trash/${id}`, { session: viewer }),
      403,
      'FORBIDDEN',
    );
    expect(await trashIds()).toContain(id);

    const sha = createHash('sha256').update(bytes).digest('hex');
    const blob = join(s.dataDir, 'blobs', sha.slice(0, 2), sha.slice(2));
    await s.app.blobStore.idle();
    expect(existsSync(blob)).toBe(true); // kept while the trash holds the portfolio

    const purged = await s.request('DELETE', `/api/v1/trash/${id}`);
    expect(purged.status).toBe(204);
    expect(await trashIds()).not.toContain(id);
    await s.app.blobStore.idle();
    expect(existsSync(blob)).toBe(false);
    expectError(await s.request('DELETE', `/api/v1/trash/${id}`), 404, 'PORTFOLIO_NOT_FOUND');
    expectError(await s.request('POST', `/api/v1/trash/${id}/restore`), 404, 'PORTFOLIO_NOT_FOUND');
    expectError(
      await s.request('GET', `/api/v1/portfolio/${id}/revisions`),
      404,
      'PORTFOLIO_NOT_FOUND',
    );
    const live = await s.request('DELETE', `/api/v1/trash/${await create()}`);
    expectError(live, 404, 'PORTFOLIO_NOT_FOUND');
  });

  it('purging also frees the files only its history still held', async () => {
    const id = await create({ projectTitle: 'Purge my history' });
    const [first, second] = [await fixtures.jpeg(21, 13), await fixtures.jpeg(23, 17)];
    expect((await uploadMultipart(s, `/api/v1/portfolio/${id}/cover`, first)).status).toBe(200);
    expect((await uploadMultipart(s, `/api/v1/portfolio/${id}/cover`, second)).status).toBe(200);
    const blobOf = (bytes: Buffer) => {
      const sha = createHash('sha256').update(bytes).digest('hex');
      return join(s.dataDir, 'blobs', sha.slice(0, 2), sha.slice(2));
    };
    await s.app.blobStore.idle();
    expect(existsSync(blobOf(first))).toBe(true); // the revision before the second cover keeps it

    expect((await del(id)).status).toBe(204);
    expect((await s.request('DELETE', `/api/v1/trash/${id}`)).status).toBe(204);
    await s.app.blobStore.idle();
    expect(existsSync(blobOf(second))).toBe(false);
    expect(existsSync(blobOf(first))).toBe(false);
  });
});
