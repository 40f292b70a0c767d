import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedPortfolioRepository } from '../../server/storage/embedded/embedded-portfolio-repository';
import { Store } from '../../server/storage/embedded/store';
import { portfolioRecord } from '../helpers/portfolio-record';

const meta = (command = 'sync') => ({ by: 'sync', time: 1, command, changedFields: [] });

/**
 * `applyRemote` stores records at the hub's revision (no compare-and-set) and keeps the local
 * invariants: each entry gets the next local seq, the feed and history stay consistent, and the
 * extra ops commit with the records (one journal entry: durable together).
 */
describe('EmbeddedPortfolioRepository.applyRemote', () => {
  let dataDir: string;
  let store: Store;
  let repo: EmbeddedPortfolioRepository;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'apply-remote-'));
    store = await Store.open({ dataDir });
    repo = await EmbeddedPortfolioRepository.open(store);
  });
  afterEach(async () => {
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('stores an unknown record at the given revision, with the next seq, and the extra ops with it', async () => {
    const applied = await repo.applyRemote(
      [
        {
          portfolioId: 'a',
          record: {
            ...portfolioRecord('a', { revision: 7 }),
            createdBy: 'hubuser',
            modifiedBy: 'ed',
          },
          meta: meta(),
        },
      ],
      (done) => [{ type: 'put', col: 'sync', key: 'checkpoint', value: { seq: done[0]!.seq } }],
    );
    expect(applied[0]!.seq).toBe(1);
    const stored = await repo.get('a');
    expect(stored).toMatchObject({ revision: 7, seq: 1, createdBy: 'hubuser', modifiedBy: 'ed' });
    expect(store.get('sync', 'checkpoint')).toEqual({ seq: 1 });
    const feed = await repo.changesSince(0, 10);
    expect(feed.changes.map((c) => [c.portfolioId, c.revision, c.seq])).toEqual([['a', 7, 1]]);
    expect((await repo.revisions('a', 10, null)).items.map((r) => r.revision)).toEqual([7]);

    // Durable together: a reopened store has the record and the extra op.
    await store.close();
    store = await Store.open({ dataDir });
    repo = await EmbeddedPortfolioRepository.open(store);
    expect((await repo.get('a'))?.revision).toBe(7);
    expect(store.get('sync', 'checkpoint')).toEqual({ seq: 1 });
  });

  it('replaces a local draft with a lower hub revision and drops the superseded drafts from history', async () => {
    await repo.insert(portfolioRecord('a'), meta('create'));
    const r1 = (await repo.get('a'))!;
    await repo.update('a', 1, { ...r1, revision: 2, projectTitle: 'draft 2' }, meta('save'));
    await repo.update('a', 2, { ...r1, revision: 3, projectTitle: 'draft 3' }, meta('save'));
    await repo.applyRemote([
      {
        portfolioId: 'a',
        record: portfolioRecord('a', { revision: 2, projectTitle: 'hub 2' }),
        meta: meta(),
      },
    ]);
    const stored = (await repo.get('a'))!;
    expect(stored).toMatchObject({ revision: 2, projectTitle: 'hub 2', seq: 4 });
    const history = await repo.revisions('a', 10, null);
    expect(history.total).toBe(2);
    const kept = history.items.map((r) => [r.revision, r.snapshot.projectTitle]);
    expect(kept).toEqual([
      [2, 'hub 2'],
      [1, 'Title a'],
    ]);
  });

  it('keeps the superseded record in history when the hub revision is higher', async () => {
    await repo.applyRemote([
      { portfolioId: 'a', record: portfolioRecord('a', { revision: 3 }), meta: meta() },
    ]);
    await repo.applyRemote([
      {
        portfolioId: 'a',
        record: portfolioRecord('a', { revision: 5, projectTitle: 'five' }),
        meta: meta(),
      },
    ]);
    const kept = (await repo.revisions('a', 10, null)).items.map((r) => [
      r.revision,
      r.snapshot.projectTitle,
    ]);
    expect(kept).toEqual([
      [5, 'five'],
      [3, 'Title a'],
    ]);
  });

  it('moves a live record to the trash for null, restores a trashed one, and leaves an absent one alone', async () => {
    await repo.applyRemote([
      { portfolioId: 'a', record: portfolioRecord('a', { revision: 2 }), meta: meta() },
    ]);
    const gone = await repo.applyRemote([
      { portfolioId: 'a', record: null, meta: meta() },
      { portfolioId: 'nobody', record: null, meta: meta() },
    ]);
    expect(gone.map((g) => g.seq)).toEqual([2, undefined]);
    expect(await repo.get('a')).toBeUndefined();
    expect((await repo.getTrashed('a'))?.revision).toBe(2);
    const feed = await repo.changesSince(1, 10);
    expect(feed.changes).toEqual([{ seq: 2, portfolioId: 'a', revision: 2, deleted: true }]);

    await repo.applyRemote([
      {
        portfolioId: 'a',
        record: portfolioRecord('a', { revision: 4, projectTitle: 'back' }),
        meta: meta(),
      },
    ]);
    expect(await repo.getTrashed('a')).toBeUndefined();
    expect(await repo.get('a')).toMatchObject({ revision: 4, projectTitle: 'back', seq: 3 });
  });

  it('brings back a purged id (its tombstone leaves the feed)', async () => {
    await repo.insert(portfolioRecord('a'), meta('create'));
    await repo.delete('a', 1, meta('delete'));
    await repo.purge({ portfolioId: 'a' });
    await repo.applyRemote([
      { portfolioId: 'a', record: portfolioRecord('a', { revision: 9 }), meta: meta() },
    ]);
    const feed = await repo.changesSince(0, 10);
    expect(feed.changes.map((c) => [c.portfolioId, c.deleted, c.revision])).toEqual([
      ['a', false, 9],
    ]);
  });

  it('commits only the extra ops when no record changes', async () => {
    await repo.applyRemote([], () => [
      { type: 'put', col: 'sync', key: 'checkpoint', value: { seq: 5 } },
    ]);
    expect(store.get('sync', 'checkpoint')).toEqual({ seq: 5 });
    expect((await repo.changesSince(0, 10)).changes).toEqual([]);
  });
});
