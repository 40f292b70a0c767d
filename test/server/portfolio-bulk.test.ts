import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/error-body';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

describe('bulk edit and its undo (DESIGN §16)', () => {
  let s: TestServer;
  let editor: string;
  let viewer: string;
  beforeAll(async () => {
    s = await startTestServer();
    editor = await s.userSession('bulk-editor', 'editor', ['Interior']);
    viewer = await s.userSession('bulk-viewer', 'viewer');
  });
  afterAll(() => s.close());

  async function create(overrides: Record<string, unknown> = {}): Promise<string> {
    const created = await s.request('POST', '/api/v1/portfolio', {
      body: portfolioBody(overrides),
    });
    expect(created.status).toBe(201);
    return created.body.portfolioId;
  }
  const detail = async (id: string) => (await s.request('GET', `/api/v1/portfolio/${id}`)).body;
  const bulk = (body: unknown, session?: string) =>
    s.request('POST', '/api/v1/portfolio/bulk', { body, session });
  const undo = (undoToken: string, session?: string) =>
    s.request('POST', '/api/v1/portfolio/bulk/undo', { body: { undoToken }, session });

  it('changes what the caller may change, one revision each, and refuses the rest per item', async () => {
    const mine = await create({ generalTag: ['old', 'keep'] });
    const theirs = await create({ category: 'Garden' });
    const answer = await bulk(
      {
        ids: [mine, theirs, 'no-such-portfolio'],
        set: { occasion: ['Wedding'] },
        addTags: { generalTag: ['new', 'keep'] },
        removeTags: { generalTag: ['old'] },
      },
      editor,
    );
    expect(answer.status).toBe(200);
    expect(answer.body.results).toEqual([
      { portfolioId: mine, status: 200, revision: 2 },
      {
        portfolioId: theirs,
        status: 403,
        code: 'CATEGORY_NOT_ALLOWED',
        message: expect.stringContaining('Garden'),
      },
      {
        portfolioId: 'no-such-portfolio',
        status: 404,
        code: 'PORTFOLIO_NOT_FOUND',
        message: expect.any(String),
      },
    ]);
    const changed = await detail(mine);
    expect(changed).toMatchObject({
      revision: 2,
      occasion: ['Wedding'],
      generalTag: ['keep', 'new'],
    });
    expect((await detail(theirs)).revision).toBe(1);
    const history = await s.request('GET', `/api/v1/portfolio/${mine}/revisions`);
    expect(history.body.revisions[0].changedFields.sort()).toEqual(['generalTag', 'occasion']);

    // Admin-only parts: an editor's staff pick or publish is a 403 for each, and changes nothing.
    const picked = await bulk(
      { ids: [mine], set: { staffPick: true }, command: 'publish' },
      editor,
    );
    expect(picked.body.results).toEqual([
      { portfolioId: mine, status: 403, code: 'FORBIDDEN_FIELD', message: expect.any(String) },
    ]);
    expect(picked.body.undoToken).toBeNull();
    expect((await detail(mine)).revision).toBe(2);
  });

  it('a stale expected revision is a 409 for that portfolio only', async () => {
    const a = await create();
    const b = await create();
    const answer = await bulk({
      ids: [a, b],
      command: 'publish',
      set: { staffPick: true },
      expected: { [a]: 1, [b]: 7 },
    });
    expect(answer.body.results).toEqual([
      { portfolioId: a, status: 200, revision: 2 },
      { portfolioId: b, status: 409, code: 'REVISION_CONFLICT', message: expect.any(String) },
    ]);
    expect(await detail(a)).toMatchObject({ published: true, staffPick: true, revision: 2 });
    expect(await detail(b)).toMatchObject({ published: false, staffPick: false, revision: 1 });
  });

  it('undo restores each one changed (content and state), skipping one changed since', async () => {
    const a = await create({ projectTitle: 'Undo me A', occasion: ['Spring'] });
    const b = await create({ projectTitle: 'Undo me B' });
    const edited = await bulk({
      filter: 'projectTitle:Undo me',
      set: { occasion: ['Autumn'] },
      command: 'publish',
    });
    expect(edited.body.results.map((r: { status: number }) => r.status)).toEqual([200, 200]);
    // b changes after the action: its undo leaves it alone.
    const put = await s.request('PUT', `/api/v1/portfolio/${b}`, {
      body: portfolioBody({ projectTitle: 'Undo me B, renamed' }),
    });
    expect(put.status).toBe(200);

    expectError(await undo(edited.body.undoToken, editor), 404, 'UNDO_NOT_FOUND');
    const undone = await undo(edited.body.undoToken);
    expect(undone.status).toBe(200);
    expect(undone.body.results).toEqual([
      { portfolioId: a, status: 200, revision: 3 },
      {
        portfolioId: b,
        status: 409,
        code: 'REVISION_CONFLICT',
        message: 'It was changed after this action, so it was left as it is.',
      },
    ]);
    expect(await detail(a)).toMatchObject({ occasion: ['Spring'], published: false, revision: 3 });
    expect(await detail(b)).toMatchObject({ occasion: ['Autumn'], published: true, revision: 3 });
    // Spent: a token undoes once; the undo's own token undoes the undo.
    expectError(await undo(edited.body.undoToken), 404, 'UNDO_NOT_FOUND');
    const redone = await undo(undone.body.undoToken);
    expect(redone.body.results).toEqual([{ portfolioId: a, status: 200, revision: 4 }]);
    expect(await detail(a)).toMatchObject({ occasion: ['Autumn'], published: true });
  });

  it('moves to the trash and back as one action, and undoes that', async () => {
    const a = await create();
    const trashed = await bulk({ ids: [a], command: 'trash' }, editor);
    expect(trashed.body.results).toEqual([{ portfolioId: a, status: 200, revision: 1 }]);
    expectError(await s.request('GET', `/api/v1/portfolio/${a}`), 404, 'PORTFOLIO_NOT_FOUND');
    const back = await undo(trashed.body.undoToken, editor);
    expect(back.body.results).toEqual([{ portfolioId: a, status: 200, revision: 2 }]);
    expect((await detail(a)).revision).toBe(2);
  });

  it('bounds the request: too many ids, a huge body, a filter matching too many', async () => {
    const many = Array.from({ length: 1001 }, (_, i) => `p${i}`);
    const overIds = expectError(
      await bulk({ ids: many, command: 'publish' }),
      400,
      'VALIDATION_FAILED',
    );
    expect(overIds.details[0]?.field).toBe('body.ids');
    const huge = Array.from({ length: 100_000 }, (_, i) => `portfolio-${i}-${'x'.repeat(20)}`);
    expectError(await bulk({ ids: huge, command: 'publish' }, editor), 413, 'PAYLOAD_TOO_LARGE');
    // A viewer learns nothing of the body: refused before it is read.
    expectError(await bulk({ ids: huge }, viewer), 403, 'FORBIDDEN');

    const total = (await s.request('GET', '/api/v1/portfolio?pageSize=1&field=portfolioId')).body
      .total as number;
    // Made through the service itself: a thousand creates over HTTP would be most of this suite.
    const admin = { username: 'admin', role: 'admin' as const, allowEdit: ['*'] };
    for (let i = total; i < 1001; i += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, 1001 - i) }, () =>
          s.app.portfolioService.create(admin, portfolioBody({ category: 'Garden' })),
        ),
      );
    }
    const everything = expectError(
      await bulk({ filter: '', addTags: { generalTag: ['x'] } }, editor),
      413,
      'BULK_TOO_MANY',
    );
    expect(everything.message).toContain('1,001');
    expect(everything.message).toContain('at most 1,000');
  });

  it('refuses a body that says nothing to do, or mixes trash with changes', async () => {
    expectError(await bulk({ ids: ['a'] }), 400, 'VALIDATION_FAILED');
    expectError(
      await bulk({ ids: ['a'], filter: 'category:Interior', command: 'publish' }),
      400,
      'VALIDATION_FAILED',
    );
    expectError(
      await bulk({ ids: ['a'], command: 'trash', set: { occasion: ['x'] } }),
      400,
      'VALIDATION_FAILED',
    );
    expectError(await bulk({ ids: ['a'], command: 'fly' }), 400, 'VALIDATION_FAILED');
  });
});
