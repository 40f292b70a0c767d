import { afterEach, describe, expect, it } from 'vitest';
import { expectError, errorFields } from '../helpers/error-body';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

interface FeedChange {
  seq: number;
  portfolioId: string;
  revision: number;
  deleted: boolean;
  portfolio?: Record<string, unknown>;
}

describe('GET /api/v1/changes (DESIGN §9)', () => {
  let s: TestServer;
  afterEach(() => s?.close());

  async function create(title: string): Promise<string> {
    const created = await s.request('POST', '/api/v1/portfolio', {
      body: portfolioBody({ projectTitle: title }),
    });
    expect(created.status).toBe(201);
    return created.body.portfolioId;
  }
  const rename = (id: string, title: string) =>
    s.request('PUT', `/api/v1/portfolio/${id}`, { body: portfolioBody({ projectTitle: title }) });
  const feed = (query = '', session?: string) =>
    s.request('GET', `/api/v1/changes${query}`, session ? { session } : {});

  it('lists changes in seq order, each portfolio once at its latest state, deletes as tombstones', async () => {
    s = await startTestServer();
    const a = await create('A');
    const b = await create('B');
    const c = await create('C');
    await rename(a, 'A2');
    await rename(b, 'B2');
    await rename(a, 'A3');
    expect((await s.request('DELETE', `/api/v1/portfolio/${c}`)).status).toBe(204);

    const response = await feed();
    expect(response.status).toBe(200);
    const { changes, next, hasMore, libraryId } = response.body;
    expect(typeof libraryId).toBe('string');
    expect(libraryId.length).toBeGreaterThan(0);
    expect(hasMore).toBe(false);
    expect(changes.map((change: FeedChange) => change.portfolioId)).toEqual([b, a, c]);
    const seqs = changes.map((change: FeedChange) => change.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(next).toBe(seqs.at(-1));

    const [changedB, changedA, tombstone] = changes as FeedChange[];
    expect(changedA).toMatchObject({ portfolioId: a, revision: 3, deleted: false });
    expect(changedA!.portfolio).toMatchObject({
      portfolioId: a,
      projectTitle: 'A3',
      oboutProject: '',
      revision: 3,
      seq: changedA!.seq,
      modifiedBy: 'admin',
    });
    expect(changedA!.portfolio).not.toHaveProperty('aboutProject');
    expect(changedB!.portfolio).toMatchObject({ projectTitle: 'B2', seq: changedB!.seq });
    expect(tombstone).toEqual({ seq: tombstone!.seq, portfolioId: c, revision: 1, deleted: true });

    // Nothing new since `next`; a later change shows up after it.
    const empty = await feed(`?since=${next}`);
    expect(empty.body).toMatchObject({ changes: [], next, hasMore: false, libraryId });
    await rename(b, 'B3');
    const later = await feed(`?since=${next}`);
    expect(later.body.changes.map((change: FeedChange) => change.portfolioId)).toEqual([b]);
    expect(later.body.next).toBeGreaterThan(next);
  });

  it('pages by limit: next and hasMore walk the whole feed once', async () => {
    s = await startTestServer();
    const ids = [];
    for (let index = 0; index < 7; index++) ids.push(await create(`P${index}`));
    const seen: string[] = [];
    let since = 0;
    for (;;) {
      const page = await feed(`?since=${since}&limit=3`);
      expect(page.status).toBe(200);
      expect(page.body.changes.length).toBeLessThanOrEqual(3);
      seen.push(...page.body.changes.map((change: FeedChange) => change.portfolioId));
      since = page.body.next;
      if (!page.body.hasMore) break;
    }
    expect(seen).toEqual(ids);
  });

  it('answers 410 RESYNC_REQUIRED for a since older than the tombstones still kept', async () => {
    s = await startTestServer();
    const gone = await create('Gone');
    const stays = await create('Stays');
    expect((await s.request('DELETE', `/api/v1/portfolio/${gone}`)).status).toBe(204);
    expect((await s.request('DELETE', `/api/v1/trash/${gone}`)).status).toBe(204);
    const caughtUp = (await feed()).body.next;
    // Time passes: the purge's tombstone is forgotten, as retention does after the trash period.
    await s.app.portfolios.forgetTombstones(Date.now() + 1);
    const stale = await feed('?since=1');
    expectError(stale, 410, 'RESYNC_REQUIRED');
    expect(errorFields(stale)).toContain('querystring.since');
    // Starting again from 0, as the 410 tells the client to, is a full read, never another 410.
    const full = await feed('?since=0');
    expect(full.status).toBe(200);
    expect(full.body.changes.map((change: FeedChange) => change.portfolioId)).toEqual([stays]);
    expect(full.body.next).toBeGreaterThan(0);
    // A client that had seen the purge goes on as before.
    const current = await feed(`?since=${caughtUp}`);
    expect(current.status).toBe(200);
    expect(current.body).toMatchObject({ changes: [], next: caughtUp, hasMore: false });
  });

  it('validates since and limit strictly, and is for editors and admins only', async () => {
    s = await startTestServer();
    await create('Any');
    for (const query of [
      '?since=abc',
      '?since=-1',
      '?since=1.5',
      '?limit=0',
      '?limit=1001',
      '?limit=2.5',
      '?limit=ten',
      '?other=1',
    ]) {
      const response = await feed(query);
      expectError(response, 400, 'VALIDATION_FAILED');
    }
    const viewer = await s.userSession('feed-viewer', 'viewer');
    expectError(await feed('', viewer), 403, 'FORBIDDEN');
    expectError(await feed('?since=abc', viewer), 403, 'FORBIDDEN');
    const editor = await s.userSession('feed-editor', 'editor', []);
    expect((await feed('', editor)).status).toBe(200);
  });
});
