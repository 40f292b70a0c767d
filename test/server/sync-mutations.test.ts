import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredFile } from '../../shared';
import { expectError } from '../helpers/error-body';
import { fixtures, uploadMultipart } from '../helpers/file-fixtures';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

type Result = {
  mutationId: string;
  status: string;
  portfolioId: string;
  revision: number;
  seq: number;
  conflictId?: string;
  error?: { code: string; message: string; details?: Array<{ field?: string }> };
};

describe('sync mutations and conflicts on the hub (DESIGN §10)', () => {
  let s: TestServer;
  let editor: string;
  let device: string;
  let viewer: string;
  let seqCounter = 0;
  beforeAll(async () => {
    s = await startTestServer();
    editor = await s.userSession('sync-editor', 'editor', ['Interior']);
    viewer = await s.userSession('sync-viewer', 'viewer');
    const made = await s.request('POST', '/api/v1/devices', {
      session: editor,
      body: { name: 'Laptop', replicaId: 'rep-1' },
    });
    device = `Bearer ${made.body.token}`;
  });
  afterAll(() => s.close());

  const mid = () => `rep-1:m${++seqCounter}`;

  async function push(
    mutations: Array<Record<string, unknown>>,
    options: { session?: string; replicaId?: string } = {},
  ) {
    return s.request<{ results: Result[] }>('POST', '/api/v1/sync/mutations', {
      session: options.session ?? device,
      body: { replicaId: options.replicaId ?? 'rep-1', mutations },
    });
  }
  async function pushOne(mutation: Record<string, unknown>): Promise<Result> {
    const answer = await push([{ mutationId: mid(), ...mutation }]);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.results[0]!;
  }
  async function hubCreate(overrides: Record<string, unknown> = {}) {
    const created = await s.request('POST', '/api/v1/portfolio', {
      body: portfolioBody(overrides),
    });
    expect(created.status).toBe(201);
    return created.body.portfolioId as string;
  }
  const detail = async (id: string) => (await s.request('GET', `/api/v1/portfolio/${id}`)).body;
  const hubPut = (id: string, fields: Record<string, unknown>) =>
    s.request('PUT', `/api/v1/portfolio/${id}`, { body: portfolioBody(fields) });
  const revisions = async (id: string) =>
    (await s.request('GET', `/api/v1/portfolio/${id}/revisions`)).body;

  it('creates, then applies an edit made at the current revision', async () => {
    const created = await pushOne({
      portfolioId: 'sync-a',
      op: 'create',
      fields: { ...portfolioBody({ projectTitle: 'From the replica' }), generalTag: ['oak'] },
    });
    expect(created).toMatchObject({ status: 'applied', portfolioId: 'sync-a', revision: 1 });
    expect(created.seq).toBeGreaterThan(0);
    const made = await detail('sync-a');
    expect(made).toMatchObject({
      projectTitle: 'From the replica',
      generalTag: ['oak'],
      createdBy: 'sync-editor',
    });
    expect(made).not.toHaveProperty('syncApplied');
    const updated = await pushOne({
      portfolioId: 'sync-a',
      op: 'update',
      baseRevision: 1,
      fields: { readyToBuy: 'yes' },
    });
    expect(updated).toMatchObject({ status: 'applied', revision: 2 });
    expect((await detail('sync-a')).readyToBuy).toBe('yes');
    const history = await revisions('sync-a');
    expect(history.revisions[0]).toMatchObject({
      revision: 2,
      command: 'sync',
      modifiedBy: 'sync-editor',
      changedFields: ['readyToBuy'],
    });
  });

  it('merges edits of different fields, and tag lists as sets', async () => {
    const id = await hubCreate({ generalTag: ['old', 'keep'] });
    await hubPut(id, { projectTitle: 'Hub title', generalTag: ['old', 'keep', 'hub'] });
    const merged = await pushOne({
      portfolioId: id,
      op: 'update',
      baseRevision: 1,
      fields: { readyToBuy: 'soon', generalTag: ['keep', 'mine'] },
    });
    expect(merged).toMatchObject({ status: 'merged', revision: 3 });
    expect(merged.conflictId).toBeUndefined();
    const now = await detail(id);
    expect(now).toMatchObject({
      projectTitle: 'Hub title',
      readyToBuy: 'soon',
      generalTag: ['keep', 'hub', 'mine'],
    });
  });

  it('keeps the hub value on a same-field conflict and stores the conflict where everyone sees it', async () => {
    const id = await hubCreate({ projectTitle: 'Base' });
    await hubPut(id, { projectTitle: 'Hub' });
    const result = await pushOne({
      portfolioId: id,
      op: 'update',
      baseRevision: 1,
      fields: { projectTitle: 'Mine', readyToBuy: 'now' },
    });
    expect(result).toMatchObject({ status: 'conflict', revision: 3 });
    expect(result.conflictId).toMatch(new RegExp(`^${id}\\.`));
    const now = await detail(id);
    expect(now).toMatchObject({ projectTitle: 'Hub', readyToBuy: 'now' });
    expect(now).not.toHaveProperty('conflicts');

    const own = await s.request('GET', `/api/v1/portfolio/${id}/conflicts`, { session: editor });
    expect(own.status).toBe(200);
    expect(own.body.conflicts).toEqual([
      {
        conflictId: result.conflictId,
        portfolioId: id,
        kind: 'field',
        createdTime: expect.any(Number),
        by: 'sync-editor',
        replicaId: 'rep-1',
        mutationId: expect.any(String),
        baseRevision: 1,
        fields: { projectTitle: { base: 'Base', current: 'Hub', theirs: 'Mine' } },
        note: expect.stringContaining('projectTitle'),
      },
    ]);
    const all = await s.request('GET', '/api/v1/conflicts', { session: editor });
    expect(all.body.conflicts).toContainEqual({
      ...own.body.conflicts[0],
      projectTitle: 'Hub',
    });
    const feed = await s.request('GET', '/api/v1/changes?since=0&limit=1000');
    const item = feed.body.changes.find((c: { portfolioId: string }) => c.portfolioId === id);
    expect(item.portfolio.conflicts).toEqual(own.body.conflicts);
    expectError(await s.request('GET', '/api/v1/conflicts', { session: viewer }), 403, 'FORBIDDEN');
  });

  it('edit against delete: the edit wins, the portfolio comes back with a note', async () => {
    const id = await hubCreate({ projectTitle: 'Doomed' });
    expect((await s.request('DELETE', `/api/v1/portfolio/${id}`)).status).toBe(204);
    const result = await pushOne({
      portfolioId: id,
      op: 'update',
      baseRevision: 1,
      fields: { projectDetail: 'Edited offline' },
    });
    expect(result).toMatchObject({ status: 'conflict', revision: 2 });
    const back = await detail(id);
    expect(back).toMatchObject({ projectTitle: 'Doomed', projectDetail: 'Edited offline' });
    const conflicts = (await s.request('GET', `/api/v1/portfolio/${id}/conflicts`)).body.conflicts;
    expect(conflicts).toEqual([
      expect.objectContaining({
        kind: 'delete',
        conflictId: result.conflictId,
        note: expect.stringMatching(/deleted on the hub.*edit won/),
      }),
    ]);
  });

  it('delete against an edit the replica has not seen: not applied, a conflict; at its base: to the trash', async () => {
    const id = await hubCreate();
    await hubPut(id, { projectTitle: 'Edited on the hub' });
    const refused = await pushOne({ portfolioId: id, op: 'delete', baseRevision: 1 });
    expect(refused).toMatchObject({ status: 'conflict', revision: 3 });
    expect((await detail(id)).projectTitle).toBe('Edited on the hub');
    const conflicts = (await s.request('GET', `/api/v1/portfolio/${id}/conflicts`)).body.conflicts;
    expect(conflicts).toEqual([expect.objectContaining({ kind: 'delete' })]);

    const deleted = await pushOne({ portfolioId: id, op: 'delete', baseRevision: 3 });
    expect(deleted).toMatchObject({ status: 'applied', revision: 3 });
    expectError(await s.request('GET', `/api/v1/portfolio/${id}`), 404, 'PORTFOLIO_NOT_FOUND');
    const restored = await pushOne({ portfolioId: id, op: 'restore', baseRevision: 3 });
    expect(restored).toMatchObject({ status: 'applied', revision: 4 });
    expect((await detail(id)).projectTitle).toBe('Edited on the hub');
  });

  it('answers a retried batch with the same results: no second revision, no new seq', async () => {
    const id = await hubCreate();
    const batch = [
      { mutationId: 'retry-1', portfolioId: 'sync-retry', op: 'create', fields: portfolioBody() },
      {
        mutationId: 'retry-2',
        portfolioId: id,
        op: 'update',
        baseRevision: 1,
        fields: { readyToBuy: 'x' },
      },
      {
        mutationId: 'retry-3',
        portfolioId: id,
        op: 'update',
        baseRevision: 2,
        fields: { readyToBuy: 'y' },
      },
      { mutationId: 'retry-4', portfolioId: 'sync-retry', op: 'delete', baseRevision: 1 },
    ];
    const first = await push(batch);
    expect(first.body.results.map((r) => r.status)).toEqual([
      'applied',
      'applied',
      'applied',
      'applied',
    ]);
    const feedBefore = await s.request('GET', '/api/v1/changes?since=0&limit=1000');
    const again = await push(batch);
    expect(again.body).toEqual(first.body);
    const feedAfter = await s.request('GET', '/api/v1/changes?since=0&limit=1000');
    expect(feedAfter.body.next).toBe(feedBefore.body.next);
    expect((await revisions(id)).total).toBe(3);
    expect((await detail(id)).readyToBuy).toBe('y');
  });

  it('rejects an unknown base and treats a pruned base as conflicting, never overwriting', async () => {
    const id = await hubCreate({ projectTitle: 'T0' });
    const unknown = await pushOne({
      portfolioId: id,
      op: 'update',
      baseRevision: 9,
      fields: { projectTitle: 'x' },
    });
    expect(unknown).toMatchObject({ status: 'rejected', revision: 1 });
    expect(unknown.error?.code).toBe('UNKNOWN_BASE_REVISION');

    await hubPut(id, { projectTitle: 'T1' });
    await hubPut(id, { projectTitle: 'T2', readyToBuy: 'r2' });
    await s.app.portfolios.pruneRevisions({ keepSince: Date.now() + 60_000, keepNewest: 1 });
    expect((await revisions(id)).total).toBe(1);
    const result = await pushOne({
      portfolioId: id,
      op: 'update',
      baseRevision: 1,
      fields: { projectTitle: 'Mine', readyToBuy: 'r2', projectLanuching: 'spring' },
    });
    expect(result.status).toBe('conflict');
    const now = await detail(id);
    expect(now).toMatchObject({ projectTitle: 'T2', projectLanuching: '' });
    const [conflict] = (await s.request('GET', `/api/v1/portfolio/${id}/conflicts`)).body.conflicts;
    expect(Object.keys(conflict.fields).sort()).toEqual(['projectLanuching', 'projectTitle']);
    expect(conflict.fields.projectTitle).toEqual({ base: null, current: 'T2', theirs: 'Mine' });
  });

  it('rejects a mutation whose files are not on the hub, and applies it once they are', async () => {
    const id = await hubCreate();
    const bytes = await fixtures.png();
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const file: StoredFile = {
      fileId: 'replica-file-1',
      originalFilename: 'plan.png',
      fullFileExtension: 'png',
      mimeType: 'image/png',
      description: '',
      createdTime: 1,
      modifiedTime: 1,
      md5Checksum: createHash('md5').update(bytes).digest('hex'),
      sha256,
      size: bytes.length,
      dimention: { width: 30, height: 10 },
    };
    const mutation = {
      mutationId: 'blob-1',
      portfolioId: id,
      op: 'update',
      baseRevision: 1,
      fields: { draftingProcess: [file] },
      files: [sha256],
    };
    const missing = (await push([mutation])).body.results[0]!;
    expect(missing).toMatchObject({ status: 'rejected', error: { code: 'BLOBS_MISSING' } });
    expect((await detail(id)).draftingProcess).toEqual([]);
    // The same bytes arrive on the hub (here through an upload to another portfolio).
    const other = await hubCreate();
    expect(
      (await uploadMultipart(s, `/api/v1/portfolio/${other}/cover`, bytes, { filename: 'a.png' }))
        .status,
    ).toBe(200);
    const applied = (await push([mutation])).body.results[0]!;
    expect(applied).toMatchObject({ status: 'applied', revision: 2 });
    expect((await detail(id)).draftingProcess).toEqual([
      expect.objectContaining({ fileID: 'replica-file-1', size: bytes.length }),
    ]);
    const download = await fetch(`${s.url}/api/v1/portfolio/${id}/files/replica-file-1`, {
      headers: { authorization: s.adminSession },
    });
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
    const unknownBlob = randomBytes(32).toString('hex');
    const stillMissing = await pushOne({
      portfolioId: id,
      op: 'update',
      baseRevision: 2,
      fields: { cover: { ...file, fileId: 'c', sha256: unknownBlob } },
    });
    expect(stillMissing.error?.code).toBe('BLOBS_MISSING');
  });

  it('checks rights and fields per mutation: nothing of a refused one is applied, the others are', async () => {
    const results = (
      await push([
        {
          mutationId: mid(),
          portfolioId: 'sync-garden',
          op: 'create',
          fields: portfolioBody({ category: 'Garden' }),
        },
        {
          mutationId: mid(),
          portfolioId: 'sync-bad',
          op: 'create',
          fields: { ...portfolioBody(), projectTitle: '', bogus: 1 },
        },
        {
          mutationId: mid(),
          portfolioId: 'sync-pick',
          op: 'create',
          fields: { ...portfolioBody(), staffPick: true },
        },
        { mutationId: mid(), portfolioId: 'sync-ok', op: 'create', fields: portfolioBody() },
      ])
    ).body.results;
    expect(results.map((r) => [r.status, r.error?.code])).toEqual([
      ['rejected', 'FORBIDDEN'],
      ['rejected', 'VALIDATION_FAILED'],
      ['rejected', 'FORBIDDEN'],
      ['applied', undefined],
    ]);
    expect(results[1]!.error!.details!.map((d) => d.field).sort()).toEqual(
      expect.arrayContaining(['fields.projectTitle']),
    );
    for (const id of ['sync-garden', 'sync-bad', 'sync-pick'])
      expectError(await s.request('GET', `/api/v1/portfolio/${id}`), 404, 'PORTFOLIO_NOT_FOUND');
    expect((await detail('sync-ok')).projectTitle).toBe('Lake house');
  });

  it('refuses viewers before the body, and a replica id bound to another device', async () => {
    expectError(
      await s.request('POST', '/api/v1/sync/mutations', { session: viewer, body: { nope: 1 } }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await s.request('POST', '/api/v1/sync/mutations', { session: device, body: { nope: 1 } }),
      400,
      'VALIDATION_FAILED',
    );
    const other = await s.request('POST', '/api/v1/devices', {
      session: editor,
      body: { name: 'Second', replicaId: 'rep-2' },
    });
    const taken = await push(
      [{ mutationId: 'x', portfolioId: 'sync-a', op: 'update', baseRevision: 2, fields: {} }],
      { session: `Bearer ${other.body.token}` },
    );
    expectError(taken, 409, 'REPLICA_ID_TAKEN');
  });

  it('resolves conflicts: keep current, keep theirs, edited fields; in history', async () => {
    async function conflicted(title: string) {
      const id = await hubCreate({ projectTitle: 'Base', readyToBuy: 'b' });
      await hubPut(id, { projectTitle: `Hub ${title}`, readyToBuy: 'hub' });
      const result = await pushOne({
        portfolioId: id,
        op: 'update',
        baseRevision: 1,
        fields: { projectTitle: `Mine ${title}`, readyToBuy: 'mine' },
      });
      expect(result.status).toBe('conflict');
      return { id, conflictId: result.conflictId! };
    }
    const resolve = (conflictId: string, body: unknown, session = editor) =>
      s.request('POST', `/api/v1/conflicts/${conflictId}/resolve`, { body, session });

    const a = await conflicted('a');
    const keptCurrent = await resolve(a.conflictId, { keep: 'current' });
    expect(keptCurrent.status).toBe(200);
    expect(keptCurrent.body).toMatchObject({
      projectTitle: 'Hub a',
      readyToBuy: 'hub',
      revision: 4,
    });
    expect(keptCurrent.headers.get('etag')).toBe('"4"');
    expect((await s.request('GET', `/api/v1/portfolio/${a.id}/conflicts`)).body.conflicts).toEqual(
      [],
    );
    expectError(await resolve(a.conflictId, { keep: 'current' }), 404, 'CONFLICT_NOT_FOUND');

    const b = await conflicted('b');
    const keptTheirs = await resolve(b.conflictId, { keep: 'theirs' });
    expect(keptTheirs.body).toMatchObject({ projectTitle: 'Mine b', readyToBuy: 'mine' });
    const history = await revisions(b.id);
    expect(history.revisions[0]).toMatchObject({
      command: 'resolve-conflict',
      modifiedBy: 'sync-editor',
      changedFields: expect.arrayContaining(['projectTitle', 'readyToBuy', 'conflicts']),
    });

    const c = await conflicted('c');
    expectError(await resolve(c.conflictId, { keep: 'theirs' }, viewer), 403, 'FORBIDDEN');
    expectError(await resolve(c.conflictId, { keep: 'both' }), 400, 'VALIDATION_FAILED');
    expectError(
      await resolve(c.conflictId, { keep: 'theirs', revision: 1 }),
      409,
      'REVISION_CONFLICT',
    );
    const edited = await resolve(c.conflictId, {
      keep: 'theirs',
      fields: { projectTitle: 'Written by a person' },
    });
    expect(edited.body).toMatchObject({ projectTitle: 'Written by a person', readyToBuy: 'mine' });
  });

  it('removes conflicts a replica resolved with its mutation', async () => {
    const id = await hubCreate({ projectTitle: 'Base' });
    await hubPut(id, { projectTitle: 'Hub' });
    const conflict = await pushOne({
      portfolioId: id,
      op: 'update',
      baseRevision: 1,
      fields: { projectTitle: 'Mine' },
    });
    const resolved = await pushOne({
      portfolioId: id,
      op: 'update',
      baseRevision: 3,
      fields: { projectTitle: 'Agreed' },
      resolveConflicts: [conflict.conflictId],
    });
    expect(resolved).toMatchObject({ status: 'applied', revision: 4 });
    expect((await detail(id)).projectTitle).toBe('Agreed');
    expect((await s.request('GET', `/api/v1/portfolio/${id}/conflicts`)).body.conflicts).toEqual(
      [],
    );
  });
});
