/**
 * The PortfolioRepository contract suite (DESIGN §9, §12): every storage backend runs these same
 * tests. A backend's test file calls `portfolioRepositoryContract` with a factory that makes an
 * empty library (and can reopen it, to check durability).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { PortfolioRecord, StoredFile } from '../../../shared';
import { listScope, type Cursor, type ListScope } from '../../../server/domain/list-query';
import {
  InvalidCursorError,
  PortfolioIdTakenError,
  PortfolioNotFoundError,
  ResyncRequiredError,
  RevisionConflictError,
  type ChangeMeta,
  type PortfolioRepository,
  type StoredPortfolio,
} from '../../../server/repositories/portfolio-repository-contract';
import { portfolioRecord } from '../../helpers/portfolio-record';

export interface ContractBackend {
  repository: PortfolioRepository;
  /** Closes the library and opens it again from what is durable. */
  reopen(): Promise<PortfolioRepository>;
  /** Closes it and removes whatever it wrote. */
  destroy(): Promise<void>;
}

export type ContractBackendFactory = () => Promise<ContractBackend>;

const DAY = 86_400_000;
let clock = Date.UTC(2026, 0, 1);

function meta(by: string, command: string, changedFields: string[] = []): ChangeMeta {
  clock += 1000;
  return { by, time: clock, command, changedFields };
}

function file(sha: string): StoredFile {
  return {
    fileId: `f-${sha.slice(0, 8)}`,
    originalFilename: `${sha.slice(0, 4)}.png`,
    fullFileExtension: 'png',
    mimeType: 'image/png',
    description: '',
    createdTime: clock,
    modifiedTime: clock,
    md5Checksum: 'd41d8cd98f00b204e9800998ecf8427e',
    sha256: sha,
    size: 10,
    dimention: { width: 1, height: 1 },
  };
}

const sha = (char: string) => char.repeat(64);

const record = (portfolioId: string, overrides: Partial<PortfolioRecord> = {}) =>
  portfolioRecord(portfolioId, { createdTime: clock, modifiedTime: clock, ...overrides });

/** The next revision of `current` with `changes`, as the service builds it. */
function edit(current: PortfolioRecord, changes: Partial<PortfolioRecord>): PortfolioRecord {
  return { ...current, ...changes, revision: current.revision + 1, modifiedTime: clock };
}

const listAll = listScope([{ key: 'createdTime', descending: false }], new Map(), false);

export function portfolioRepositoryContract(name: string, open: ContractBackendFactory): void {
  describe(`PortfolioRepository contract: ${name}`, () => {
    let backend: ContractBackend;
    let repo: PortfolioRepository;
    const start = async () => {
      backend = await open();
      repo = backend.repository;
    };
    afterEach(async () => backend?.destroy());

    /** Inserts `id` and saves it `updates` more times; answers the stored record. */
    async function withRevisions(id: string, updates: number, by = 'ann') {
      let current = await repo.insert(record(id), meta(by, 'create'));
      for (let n = 0; n < updates; n++) {
        current = await repo.update(
          id,
          current.revision,
          edit(current, { projectDetail: `edit ${n + 1}` }),
          meta(by, 'save', ['projectDetail']),
        );
      }
      return current;
    }

    describe('insert and get', () => {
      it('stores the record with seq and authors, and answers it', async () => {
        await start();
        const stored = await repo.insert(record('p1'), meta('ann', 'create'));
        expect(stored).toMatchObject({ portfolioId: 'p1', revision: 1, createdBy: 'ann' });
        expect(stored.modifiedBy).toBe('ann');
        expect(stored.seq).toBeGreaterThan(0);
        expect(await repo.get('p1')).toEqual(stored);
        expect(await repo.get('nope')).toBeUndefined();
        expect(repo.libraryId).toMatch(/\S{8,}/);
      });

      it('refuses a taken id, live or in the trash, and changes nothing', async () => {
        await start();
        const first = await repo.insert(record('p1'), meta('ann', 'create'));
        await expect(
          repo.insert(record('p1', { projectTitle: 'other' }), meta('bob', 'create')),
        ).rejects.toBeInstanceOf(PortfolioIdTakenError);
        expect(await repo.get('p1')).toEqual(first);

        await repo.delete('p1', 1, meta('ann', 'delete'));
        await expect(repo.insert(record('p1'), meta('bob', 'create'))).rejects.toBeInstanceOf(
          PortfolioIdTakenError,
        );
        expect(await repo.get('p1')).toBeUndefined();
        expect((await repo.getTrashed('p1'))?.snapshot).toEqual(first);
      });

      it('lets a purged id be used again', async () => {
        await start();
        await repo.insert(record('p1'), meta('ann', 'create'));
        await repo.delete('p1', undefined, meta('ann', 'delete'));
        expect(await repo.purge({ portfolioId: 'p1' })).toEqual(['p1']);
        const again = await repo.insert(record('p1'), meta('bob', 'create'));
        expect(again.createdBy).toBe('bob');
        expect((await repo.revisions('p1', 10, null)).total).toBe(1);
      });

      it('lists live portfolios through query', async () => {
        await start();
        await repo.insert(record('a'), meta('ann', 'create'));
        await repo.insert(record('b'), meta('ann', 'create'));
        await repo.delete('a', undefined, meta('ann', 'delete'));
        const page = await repo.query({ ...listAll, after: null, limit: 10 });
        expect(page.items.map((item) => item.portfolioId)).toEqual(['b']);
        expect(page.total).toBe(1);
      });

      it('searches (q) by word prefixes, case and accents folded, best match first', async () => {
        await start();
        await repo.insert(record('a', { projectTitle: 'Café Noir' }), meta('ann', 'create'));
        await repo.insert(record('b', { projectTitle: 'Cafeteria' }), meta('ann', 'create'));
        await repo.insert(
          record('c', { projectTitle: 'Other', aboutProject: 'a CAFE nearby' }),
          meta('ann', 'create'),
        );
        await repo.insert(
          record('d', { projectTitle: 'Noir', occasion: ['café'] }),
          meta('a', 'c'),
        );
        const created = await repo.insert(record('e', { projectTitle: 'Tea' }), meta('a', 'c'));
        const search = (q: string[], order = 'relevance', pageSize = 10) =>
          repo.query({
            ...listScope(
              [{ key: order as 'relevance', descending: order === 'relevance' }],
              new Map(),
              false,
              q,
            ),
            after: null,
            limit: pageSize,
          });
        // A whole title word 4, a title word's start 2, a whole word elsewhere 1; ties by id.
        const ranked = await search(['cafe']);
        expect(ranked.items.map((item) => item.portfolioId)).toEqual(['a', 'b', 'c', 'd']);
        expect(ranked.total).toBe(4);
        const both = await search(['caf', 'noir'], 'createdTime');
        expect(both.items.map((item) => item.portfolioId)).toEqual(['a', 'd']);
        const paged = await search(['cafe'], 'relevance', 2);
        expect(paged.next).toEqual({ values: [2], id: 'b' });
        // A change is searched at once, under its new words only.
        await repo.update('e', 1, edit(created, { projectTitle: 'Café crème' }), meta('a', 's'));
        expect((await search(['tea'])).total).toBe(0);
        expect((await search(['creme', 'cafe'])).items.map((item) => item.portfolioId)).toEqual([
          'e',
        ]);
      });
    });

    describe('facets and the category filter', () => {
      const facetScope = (filter: [string, string[]][], visibleOnly = false, search?: string[]) => {
        const {
          order: _order,
          orderKey: _orderKey,
          ...scope
        } = listScope(
          [{ key: 'createdTime', descending: false }],
          new Map(filter) as ListScope['filter'],
          visibleOnly,
          search ?? null,
        );
        return { ...scope, keys: ['category', 'generalTag', 'readyToBuy'] as const };
      };
      const plain = (counts: Awaited<ReturnType<PortfolioRepository['facets']>>) =>
        Object.fromEntries(
          Object.entries(counts).map(([key, values]) => [key, Object.fromEntries(values!)]),
        );

      it('counts stored values among the matches, in step with every write and after a reopen', async () => {
        await start();
        const hidden = { published: false };
        await repo.insert(
          record('a', { category: 'Art', generalTag: ['oak', 'oak', 'glass'] }),
          meta('ann', 'create'),
        );
        await repo.insert(
          record('b', { category: 'art', generalTag: ['oak'], ...hidden }),
          meta('ann', 'c'),
        );
        const c = await repo.insert(
          record('c', {
            category: 'Wood',
            readyToBuy: 'yes',
            projectTitle: 'Lake cabin',
            ...hidden,
          }),
          meta('ann', 'create'),
        );
        const expected = {
          category: { Art: 1, art: 1, Wood: 1 },
          generalTag: { oak: 2, glass: 1 },
          readyToBuy: { '': 2, yes: 1 },
        };
        expect(plain(await repo.facets(facetScope([])))).toEqual(expected);
        expect(plain(await repo.facets(facetScope([], true)))).toEqual({
          category: { Art: 1 },
          generalTag: { oak: 1, glass: 1 },
          readyToBuy: { '': 1 },
        });
        // The filter's category is folded (parseFilter does it): every spelling matches.
        const arts = facetScope([['category', ['art']]]);
        expect(plain(await repo.facets(arts))).toEqual({
          category: { Art: 1, art: 1 },
          generalTag: { oak: 2, glass: 1 },
          readyToBuy: { '': 2 },
        });
        const page = await repo.query({ ...listAll, filter: arts.filter, after: null, limit: 10 });
        expect(page.items.map((item) => item.portfolioId)).toEqual(['a', 'b']);
        expect(page.total).toBe(2);
        expect(plain(await repo.facets(facetScope([], false, ['lake'])))).toEqual({
          category: { Wood: 1 },
          generalTag: {},
          readyToBuy: { yes: 1 },
        });

        await repo.update(
          'c',
          1,
          edit(c, { category: 'ART', generalTag: ['glass'] }),
          meta('a', 's'),
        );
        await repo.delete('b', undefined, meta('ann', 'delete'));
        const after = {
          category: { Art: 1, ART: 1 },
          generalTag: { oak: 1, glass: 2 },
          readyToBuy: { '': 1, yes: 1 },
        };
        expect(plain(await repo.facets(facetScope([])))).toEqual(after);
        // Counted before the writes for this filter, and kept in step with them since.
        expect(plain(await repo.facets(arts))).toEqual(after);
        repo = await backend.reopen();
        expect(plain(await repo.facets(facetScope([])))).toEqual(after);
        expect(plain(await repo.facets(facetScope([['category', ['art']]])))).toEqual(after);
      });
    });

    describe('list with a fields hint', () => {
      type Key = keyof PortfolioRecord;
      /** Every page of a query, with or without `fields`. */
      async function pages(scope: ListScope, limit: number, fields?: readonly Key[]) {
        const found: Array<Awaited<ReturnType<PortfolioRepository['query']>>> = [];
        let after: Cursor | null = null;
        do {
          const page: (typeof found)[number] = await repo.query({ ...scope, after, limit, fields });
          found.push(page);
          after = page.next;
        } while (after && found.length < 100);
        return found;
      }

      it('answers the asked keys with the same items, order, totals and cursors as whole records', async () => {
        await start();
        // Titles and categories whose sort keys are unusual (case, accents, outside the BMP,
        // ties), array values that need quoting, and a cover (a key held only in the record).
        const titles = ['apple', 'Apple', 'Äpfel', '😀 smile', 'zebra', 'apple', 'back\\slash "q"'];
        const tags = [['red', 'a,b'], [], ['NULL', '{x}'], ['red'], ['"quoted"', 'back\\slash']];
        for (const [index, title] of titles.entries()) {
          await repo.insert(
            record(`p${index}`, {
              projectTitle: title,
              category: index % 3 === 0 ? 'Zoo' : index % 3 === 1 ? 'Äpfel' : '😀',
              memberBarcode: `M${index % 2}`,
              staffPick: index % 2 === 0,
              published: index !== 3,
              createdTime: clock - (index % 3) * 1000,
              relativeCategory: tags[index % tags.length]!,
              certificateByOrg: tags[(index + 1) % tags.length]!,
              readyToBuy: index % 2 ? 'yes' : '',
              cover: index % 2 ? file(sha(String(index))) : null,
            }),
            meta('ann', 'create'),
          );
        }
        const scopes: ListScope[] = [
          listAll,
          listScope([{ key: 'projectTitle', descending: true }], new Map(), false),
          listScope(
            [
              { key: 'category', descending: false },
              { key: 'projectTitle', descending: false },
            ],
            // A scope holds a category as the filter folds it (list-query's parseFilter).
            new Map([['category', ['zoo']]]),
            false,
          ),
          listScope(
            [
              { key: 'staffPick', descending: true },
              { key: 'modifiedTime', descending: true },
            ],
            new Map([['memberBarcode', ['M0', 'M1']]]),
            true,
          ),
          listScope(
            [{ key: 'category', descending: true }],
            new Map([['staffPick', ['true']]]),
            false,
          ),
          listScope([{ key: 'relevance', descending: true }], new Map(), false, ['app']),
        ];
        const selections: Array<readonly Key[]> = [
          ['portfolioId'],
          ['portfolioId', 'projectTitle', 'createdTime'],
          ['category', 'memberBarcode', 'staffPick', 'published', 'active', 'revision'],
          ['relativeCategory', 'certificateByOrg', 'readyToBuy', 'modifiedTime'],
          ['projectTitle', 'cover'],
        ];
        for (const scope of scopes) {
          for (const limit of [2, 100]) {
            const whole = await pages(scope, limit);
            expect(whole[0]!.total).toBeGreaterThan(0);
            for (const fields of selections) {
              const context = `${scope.orderKey} ${scope.filterKey} ${limit} ${fields.join()}`;
              const narrow = await pages(scope, limit, fields);
              expect(narrow.length, context).toBe(whole.length);
              for (const [at, page] of whole.entries()) {
                const got = narrow[at]!;
                expect(got.total, context).toBe(page.total);
                expect(got.next, context).toEqual(page.next);
                const pick = (item: Partial<PortfolioRecord>) =>
                  Object.fromEntries(fields.map((key) => [key, item[key]]));
                expect(got.items.map(pick), context).toEqual(page.items.map(pick));
              }
            }
          }
        }
      });
    });

    describe('compare-and-set', () => {
      it('updates at the expected revision, keeping createdBy and stamping modifiedBy', async () => {
        await start();
        const created = await repo.insert(record('p1'), meta('ann', 'create'));
        const updated = await repo.update(
          'p1',
          1,
          edit(created, { projectTitle: 'New' }),
          meta('bob', 'save', ['projectTitle']),
        );
        expect(updated).toMatchObject({ revision: 2, createdBy: 'ann', modifiedBy: 'bob' });
        expect(updated.seq).toBeGreaterThan(created.seq);
        expect(await repo.get('p1')).toEqual(updated);
      });

      it('refuses a stale revision or an unknown id, changing nothing', async () => {
        await start();
        const created = await repo.insert(record('p1'), meta('ann', 'create'));
        const updated = await repo.update('p1', 1, edit(created, {}), meta('ann', 'save'));
        const stale = repo.update('p1', 1, edit(created, { projectTitle: 'x' }), meta('b', 's'));
        await expect(stale).rejects.toBeInstanceOf(RevisionConflictError);
        await expect(stale).rejects.toMatchObject({ currentRevision: 2, expectedRevision: 1 });
        await expect(
          repo.update('nope', 1, record('nope', { revision: 2 }), meta('a', 'save')),
        ).rejects.toBeInstanceOf(PortfolioNotFoundError);
        expect(await repo.get('p1')).toEqual(updated);
        expect(await repo.get('nope')).toBeUndefined();
        const feed = await repo.changesSince(0, 100);
        expect(feed.changes.map((change) => change.seq)).toEqual([updated.seq]);
      });

      it('lets exactly one of 50 concurrent updates from one base succeed', async () => {
        await start();
        const base = await repo.insert(record('p1'), meta('ann', 'create'));
        const results = await Promise.allSettled(
          Array.from({ length: 50 }, (_, n) =>
            repo.update(
              'p1',
              base.revision,
              edit(base, { projectTitle: `writer ${n}` }),
              meta(`w${n}`, 'save', ['projectTitle']),
            ),
          ),
        );
        const won = results.filter((result) => result.status === 'fulfilled');
        const lost = results.filter((result) => result.status === 'rejected');
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(49);
        for (const result of lost) expect(result.reason).toBeInstanceOf(RevisionConflictError);
        const winner = (won[0] as PromiseFulfilledResult<StoredPortfolio>).value;
        expect(await repo.get('p1')).toEqual(winner);
        expect((await repo.revisions('p1', 100, null)).total).toBe(2);
      });

      it('deletes conditionally: a stale revision is a conflict, undefined deletes any', async () => {
        await start();
        await withRevisions('p1', 1);
        await expect(repo.delete('p1', 1, meta('ann', 'delete'))).rejects.toBeInstanceOf(
          RevisionConflictError,
        );
        expect(await repo.get('p1')).toBeDefined();
        const entry = await repo.delete('p1', 2, meta('bob', 'delete'));
        expect(entry).toMatchObject({ portfolioId: 'p1', revision: 2, deletedBy: 'bob' });
        await expect(repo.delete('p1', undefined, meta('a', 'delete'))).rejects.toBeInstanceOf(
          PortfolioNotFoundError,
        );
      });
    });

    describe('seq', () => {
      it('grows strictly across every kind of change, in commit order', async () => {
        await start();
        const seqs: number[] = [];
        const a = await repo.insert(record('a'), meta('ann', 'create'));
        seqs.push(a.seq);
        const a2 = await repo.update('a', 1, edit(a, {}), meta('ann', 'save'));
        seqs.push(a2.seq);
        seqs.push((await repo.delete('a', 2, meta('ann', 'delete'))).seq);
        const back = await repo.restoreFromTrash('a', edit(a2, {}), meta('ann', 'undelete', ['*']));
        seqs.push(back.seq);
        await repo.delete('a', undefined, meta('ann', 'delete'));
        await repo.purge({ portfolioId: 'a' });
        const tail = (await repo.changesSince(back.seq, 10)).changes;
        seqs.push(...tail.map((change) => change.seq));
        const concurrent = await Promise.all(
          ['b', 'c', 'd'].map((id) => repo.insert(record(id), meta('ann', 'create'))),
        );
        seqs.push(...concurrent.map((stored) => stored.seq));
        expect(seqs).toHaveLength(8);
        for (let n = 1; n < seqs.length; n++) expect(seqs[n]!).toBeGreaterThan(seqs[n - 1]!);
      });
    });

    describe('sync metadata', () => {
      it('keeps conflicts and applied mutations whole: live, in history, in the trash, in the feed, after a reopen', async () => {
        await start();
        const created = await repo.insert(record('s1'), meta('ann', 'create'));
        const conflicts = [
          {
            conflictId: 'c-1',
            portfolioId: 's1',
            kind: 'field' as const,
            createdTime: clock,
            by: 'ann',
            replicaId: 'r-1',
            mutationId: 'm-1',
            baseRevision: 1,
            fields: { projectTitle: { base: 'a', current: 'b', theirs: { nested: ['c'] } } },
            note: 'both sides changed the title',
          },
        ];
        const syncApplied = [
          { replicaId: 'r-1', mutationId: 'm-1', status: 'conflict', revision: 2, time: clock },
        ];
        const updated = await repo.update(
          's1',
          1,
          edit(created, { conflicts, syncApplied }),
          meta('ann', 'save', ['conflicts']),
        );
        expect(updated.conflicts).toEqual(conflicts);
        expect((await repo.get('s1'))!.conflicts).toEqual(conflicts);
        expect((await repo.revision('s1', 2))!.snapshot.syncApplied).toEqual(syncApplied);
        const feed = (await repo.changesSince(0, 10)).changes[0]!;
        expect(!feed.deleted && feed.portfolio.conflicts).toEqual(conflicts);
        repo = await backend.reopen();
        expect(await repo.get('s1')).toEqual(updated);
        await repo.delete('s1', 2, meta('ann', 'delete'));
        expect((await repo.getTrashed('s1'))!.snapshot.conflicts).toEqual(conflicts);
      });
    });

    describe('conflicted portfolios', () => {
      const conflictOf = (portfolioId: string) => ({
        conflictId: `${portfolioId}.c`,
        portfolioId,
        kind: 'field' as const,
        createdTime: clock,
        by: 'ann',
        replicaId: 'r-1',
        mutationId: 'm-1',
        baseRevision: 1,
        fields: { projectTitle: { base: 'a', current: 'b', theirs: 'c' } },
        note: 'both sides changed the title',
      });
      const ids = async () => (await repo.listConflicted()).map((item) => item.portfolioId);

      it('lists the live portfolios with open conflicts, in step with every write and after a reopen', async () => {
        await start();
        const one = await repo.insert(record('k1'), meta('ann', 'create'));
        const two = await repo.insert(record('k2'), meta('ann', 'create'));
        await repo.insert(record('k3'), meta('ann', 'create'));
        expect(await repo.listConflicted()).toEqual([]);

        const oneConflicted = await repo.update(
          'k1',
          1,
          edit(one, { conflicts: [conflictOf('k1')] }),
          meta('ann', 'sync', ['conflicts']),
        );
        const twoConflicts = [conflictOf('k2')];
        await repo.update(
          'k2',
          1,
          edit(two, { conflicts: twoConflicts }),
          meta('ann', 'sync', ['conflicts']),
        );
        expect(await ids()).toEqual(['k1', 'k2']);
        expect((await repo.listConflicted())[0]).toEqual(oneConflicted);

        // Resolved: the conflict leaves the record, and the record the list.
        const { conflicts: _resolved, ...rest } = oneConflicted;
        await repo.update('k1', 2, edit(rest, {}), meta('ann', 'resolve-conflict'));
        expect(await ids()).toEqual(['k2']);

        // In the trash: not live, not listed; back from it: listed again.
        const trashed = await repo.delete('k2', 2, meta('ann', 'delete'));
        expect(await repo.listConflicted()).toEqual([]);
        await repo.restoreFromTrash('k2', edit(trashed.snapshot, {}), meta('ann', 'undelete'));
        expect(await ids()).toEqual(['k2']);

        repo = await backend.reopen();
        expect(await ids()).toEqual(['k2']);
        expect((await repo.listConflicted())[0]!.conflicts).toEqual(twoConflicts);
      });
    });

    describe('change feed', () => {
      it('answers changes in seq order, collapsed to each portfolio latest state', async () => {
        await start();
        await withRevisions('a', 2);
        const b = await withRevisions('b', 0);
        const a3 = await repo.update(
          'a',
          3,
          edit((await repo.get('a'))!, { projectTitle: 'last' }),
          meta('ann', 'save'),
        );
        const page = await repo.changesSince(0, 100);
        expect(page.changes.map((c) => [c.portfolioId, c.revision])).toEqual([
          ['b', 1],
          ['a', 4],
        ]);
        expect(page.changes.map((c) => c.seq)).toEqual([b.seq, a3.seq]);
        const latest = page.changes[1]!;
        expect(latest.deleted).toBe(false);
        if (!latest.deleted) expect(latest.portfolio).toEqual(a3);
        expect(page).toMatchObject({ next: a3.seq, hasMore: false });
        expect(await repo.changesSince(a3.seq, 100)).toEqual({
          changes: [],
          next: a3.seq,
          hasMore: false,
        });
      });

      it('shows deleted and purged portfolios as tombstones', async () => {
        await start();
        await withRevisions('a', 1);
        await withRevisions('b', 0);
        const deleted = await repo.delete('a', 2, meta('ann', 'delete'));
        let page = await repo.changesSince(0, 100);
        expect(page.changes.at(-1)).toEqual({
          seq: deleted.seq,
          portfolioId: 'a',
          revision: 2,
          deleted: true,
        });
        const since = page.next;
        await repo.purge({ portfolioId: 'a' });
        page = await repo.changesSince(since, 100);
        expect(page.changes).toHaveLength(1);
        expect(page.changes[0]).toMatchObject({ portfolioId: 'a', deleted: true, revision: 2 });
        expect(page.changes[0]!.seq).toBeGreaterThan(deleted.seq);
        expect(page.changes[0]).not.toHaveProperty('portfolio');
      });

      it('pages by limit with next and hasMore, skipping nothing', async () => {
        await start();
        for (const id of ['a', 'b', 'c', 'd', 'e']) await repo.insert(record(id), meta('a', 'c'));
        const seen: string[] = [];
        let since = 0;
        let pages = 0;
        for (;;) {
          const page = await repo.changesSince(since, 2);
          pages++;
          seen.push(...page.changes.map((change) => change.portfolioId));
          expect(page.next).toBe(page.changes.at(-1)?.seq ?? since);
          since = page.next;
          if (!page.hasMore) break;
          expect(page.changes).toHaveLength(2);
        }
        expect(seen).toEqual(['a', 'b', 'c', 'd', 'e']);
        expect(pages).toBe(3);
      });

      it('asks for a resync when since is older than the tombstones kept', async () => {
        await start();
        await repo.insert(record('a'), meta('ann', 'create'));
        await repo.insert(record('b'), meta('ann', 'create'));
        await repo.delete('a', undefined, meta('ann', 'delete'));
        await repo.purge({ portfolioId: 'a' });
        const purgedSeq = (await repo.changesSince(0, 100)).next;
        expect(await repo.forgetTombstones(Date.now() - DAY)).toBe(0);
        expect(await repo.forgetTombstones(Date.now() + DAY)).toBe(1);
        const resync = repo.changesSince(1, 100);
        await expect(resync).rejects.toBeInstanceOf(ResyncRequiredError);
        await expect(resync).rejects.toMatchObject({ since: 1, oldestKnown: purgedSeq });
        // 0 is the full read a resync starts again with: never refused.
        const full = await repo.changesSince(0, 100);
        expect(full.changes.map((change) => change.portfolioId)).toEqual(['b']);
        await expect(repo.changesSince(purgedSeq - 1, 10)).rejects.toBeInstanceOf(
          ResyncRequiredError,
        );
        const current = await repo.changesSince(purgedSeq, 10);
        expect(current.changes).toEqual([]);
      });

      it('asks for a resync when since is past the last change (a library restored from an older copy)', async () => {
        await start();
        await repo.insert(record('a'), meta('ann', 'create'));
        const last = (await repo.changesSince(0, 100)).next;
        expect((await repo.changesSince(last, 10)).changes).toEqual([]);
        const ahead = repo.changesSince(last + 5, 10);
        await expect(ahead).rejects.toBeInstanceOf(ResyncRequiredError);
        await expect(ahead).rejects.toMatchObject({
          since: last + 5,
          message: expect.stringMatching(/restored from an older copy/),
        });
      });
    });

    describe('history', () => {
      it('keeps every revision as a snapshot, newest first, with who, when and what', async () => {
        await start();
        const created = await repo.insert(
          record('p1', { cover: file(sha('a')) }),
          meta('ann', 'create'),
        );
        const second = await repo.update(
          'p1',
          1,
          edit(created, { cover: file(sha('b')), projectTitle: 'Two' }),
          meta('bob', 'file', ['cover', 'projectTitle']),
        );
        const page = await repo.revisions('p1', 10, null);
        expect(page.total).toBe(2);
        expect(page.next).toBeNull();
        expect(page.items.map((item) => item.revision)).toEqual([2, 1]);
        expect(page.items[0]).toMatchObject({
          portfolioId: 'p1',
          revision: 2,
          seq: second.seq,
          modifiedBy: 'bob',
          command: 'file',
          changedFields: ['cover', 'projectTitle'],
        });
        expect(page.items[0]!.snapshot).toEqual(second);
        expect(page.items[1]!.snapshot).toEqual(created);
        expect(page.items[1]).toMatchObject({ modifiedBy: 'ann', command: 'create' });
        expect((await repo.revision('p1', 1))?.snapshot.cover?.sha256).toBe(sha('a'));
        expect(await repo.revision('p1', 3)).toBeUndefined();
        expect(await repo.revision('nope', 1)).toBeUndefined();
      });

      it('inserts a portfolio with the history another library kept (import)', async () => {
        await start();
        const before = (await repo.insert(record('other'), meta('ann', 'create'))).seq;
        const base = { ...record('p1'), createdBy: 'cat', modifiedBy: 'cat' };
        const imported = [
          {
            revision: 2,
            modifiedTime: 100,
            modifiedBy: 'cat',
            command: 'create',
            changedFields: ['projectTitle'],
            snapshot: { ...base, revision: 2, projectTitle: 'Two' },
          },
          {
            revision: 5,
            modifiedTime: 200,
            modifiedBy: 'dan',
            command: 'file',
            changedFields: ['cover'],
            snapshot: {
              ...base,
              revision: 5,
              projectTitle: 'Five',
              cover: file(sha('c')),
              modifiedBy: 'dan',
            },
          },
        ];
        const stored = await repo.insertWithHistory(imported);
        expect(stored).toMatchObject({
          portfolioId: 'p1',
          revision: 5,
          createdBy: 'cat',
          modifiedBy: 'dan',
          projectTitle: 'Five',
        });
        expect(stored.seq).toBe(before + 2);
        expect(await repo.get('p1')).toEqual(stored);
        const page = await repo.revisions('p1', 10, null);
        expect(page.items.map((item) => [item.revision, item.modifiedBy, item.command])).toEqual([
          [5, 'dan', 'file'],
          [2, 'cat', 'create'],
        ]);
        expect(page.items[1]!.snapshot).toMatchObject({ projectTitle: 'Two', seq: before + 1 });
        expect(page.items[1]!.modifiedTime).toBe(100);
        expect(await repo.referencedBlobs()).toContain(sha('c'));
        await expect(repo.insertWithHistory(imported)).rejects.toBeInstanceOf(
          PortfolioIdTakenError,
        );
        const reopened = await backend.reopen();
        expect(await reopened.get('p1')).toEqual(stored);
        expect((await reopened.revision('p1', 2))?.snapshot.projectTitle).toBe('Two');
      });

      it('pages revisions by pageSize with a cursor', async () => {
        await start();
        await withRevisions('p1', 6);
        const revisions: number[] = [];
        let cursor: string | null = null;
        do {
          const page: Awaited<ReturnType<PortfolioRepository['revisions']>> = await repo.revisions(
            'p1',
            3,
            cursor,
          );
          expect(page.total).toBe(7);
          revisions.push(...page.items.map((item) => item.revision));
          cursor = page.next;
        } while (cursor);
        expect(revisions).toEqual([7, 6, 5, 4, 3, 2, 1]);
        await expect(repo.revisions('p1', 3, 'garbage')).rejects.toBeInstanceOf(InvalidCursorError);
      });

      it('still answers the history of a trashed portfolio, its current revision included', async () => {
        await start();
        const current = await withRevisions('p1', 1);
        await repo.delete('p1', undefined, meta('ann', 'delete'));
        expect((await repo.revision('p1', 2))?.snapshot).toEqual(current);
        expect((await repo.revisions('p1', 10, null)).total).toBe(2);
      });

      it('prunes by retention: the newest N always, older ones only while recent', async () => {
        await start();
        await withRevisions('old', 5); // 6 revisions
        const mixed = await withRevisions('mixed', 1); // 2 revisions before the cutoff…
        const cutoff = clock + 1;
        clock += 10 * DAY;
        let current = mixed;
        for (let n = 0; n < 3; n++) {
          current = await repo.update('mixed', current.revision, edit(current, {}), meta('a', 's'));
        } // …and 3 after
        const removed = await repo.pruneRevisions({ keepSince: cutoff, keepNewest: 2 });
        expect(removed).toBe(4 + 2);
        expect((await repo.revisions('old', 10, null)).items.map((i) => i.revision)).toEqual([
          6, 5,
        ]);
        // 3 is not among the newest 2 but recent enough; 1 and 2 are neither.
        expect((await repo.revisions('mixed', 10, null)).items.map((i) => i.revision)).toEqual([
          5, 4, 3,
        ]);
        // Time moves on: only the newest 2 are left of both.
        const later = await repo.pruneRevisions({ keepSince: clock + DAY, keepNewest: 2 });
        expect(later).toBe(1);
        expect((await repo.revisions('mixed', 10, null)).total).toBe(2);
        // The current revision stays even when keepNewest says 0.
        await repo.pruneRevisions({ keepSince: clock + DAY, keepNewest: 0 });
        expect((await repo.revisions('old', 10, null)).items.map((i) => i.revision)).toEqual([6]);
        expect((await repo.revision('old', 6))?.snapshot).toEqual(await repo.get('old'));
      });
    });

    describe('trash', () => {
      it('lists the trash newest first, by page', async () => {
        await start();
        for (const id of ['a', 'b', 'c']) await repo.insert(record(id), meta('ann', 'create'));
        for (const id of ['b', 'a', 'c']) await repo.delete(id, undefined, meta('bob', 'delete'));
        const first = await repo.listTrash(2, null);
        expect(first.items.map((item) => item.portfolioId)).toEqual(['c', 'a']);
        expect(first.total).toBe(3);
        expect(first.items[0]).toMatchObject({
          projectTitle: 'Title c',
          category: 'Art',
          deletedBy: 'bob',
          revision: 1,
        });
        const second = await repo.listTrash(2, first.next);
        expect(second.items.map((item) => item.portfolioId)).toEqual(['b']);
        expect(second.next).toBeNull();
        await expect(repo.listTrash(2, 'x')).rejects.toBeInstanceOf(InvalidCursorError);
      });

      it('restores a trashed portfolio at a new revision, history continuing', async () => {
        await start();
        const before = await withRevisions('p1', 1, 'ann');
        await repo.delete('p1', 2, meta('ann', 'delete'));
        const restored = await repo.restoreFromTrash(
          'p1',
          edit(before, {}),
          meta('bob', 'undelete'),
        );
        expect(restored).toMatchObject({ revision: 3, createdBy: 'ann', modifiedBy: 'bob' });
        expect(await repo.get('p1')).toEqual(restored);
        expect(await repo.getTrashed('p1')).toBeUndefined();
        expect((await repo.listTrash(10, null)).total).toBe(0);
        const history = await repo.revisions('p1', 10, null);
        expect(history.items.map((item) => item.revision)).toEqual([3, 2, 1]);
        expect(history.items[1]!.snapshot).toEqual(before);
        await expect(
          repo.restoreFromTrash('p1', edit(restored, {}), meta('bob', 'undelete')),
        ).rejects.toBeInstanceOf(PortfolioNotFoundError);
      });

      it('purges one id or everything deleted before a time, with its history', async () => {
        await start();
        for (const id of ['a', 'b', 'c']) await withRevisions(id, 1);
        await repo.delete('a', undefined, meta('ann', 'delete'));
        const cutoff = clock + 1;
        clock += DAY;
        await repo.delete('b', undefined, meta('ann', 'delete'));
        await repo.delete('c', undefined, meta('ann', 'delete'));
        expect(await repo.purge({ deletedBefore: cutoff })).toEqual(['a']);
        expect(await repo.purge({ portfolioId: 'c' })).toEqual(['c']);
        expect(await repo.purge({ portfolioId: 'nope' })).toEqual([]);
        expect((await repo.listTrash(10, null)).items.map((item) => item.portfolioId)).toEqual([
          'b',
        ]);
        expect(await repo.getTrashed('a')).toBeUndefined();
        expect((await repo.revisions('a', 10, null)).total).toBe(0);
        expect(await repo.revision('a', 1)).toBeUndefined();
        expect((await repo.revisions('b', 10, null)).total).toBe(2);
      });

      it("keeps a purged portfolio's applied sync mutations with its tombstone", async () => {
        await start();
        const applied = {
          replicaId: 'r1',
          mutationId: 'create-1',
          status: 'applied',
          revision: 1,
          time: clock,
        };
        const made = await repo.insert(
          record('synced', { syncApplied: [applied] }),
          meta('ann', 'create'),
        );
        await repo.insert(record('plain'), meta('ann', 'create'));
        expect(await repo.getPurged('synced')).toBeUndefined();
        await repo.delete('synced', made.revision, meta('ann', 'delete'));
        await repo.delete('plain', undefined, meta('ann', 'delete'));
        expect(await repo.getPurged('synced')).toBeUndefined();
        await repo.purge({ portfolioId: 'synced' });
        await repo.purge({ portfolioId: 'plain' });
        const purged = await repo.getPurged('synced');
        expect(purged).toEqual({
          portfolioId: 'synced',
          revision: 1,
          seq: expect.any(Number),
          syncApplied: [applied],
        });
        expect((await repo.getPurged('plain'))?.syncApplied).toEqual([]);
        expect(await repo.getPurged('never')).toBeUndefined();
        // The tombstone goes with forgetTombstones, and what it kept with it.
        await repo.forgetTombstones(Date.now() + DAY);
        expect(await repo.getPurged('synced')).toBeUndefined();
      });
    });

    describe('blob references', () => {
      it('counts live records, the trash and kept revisions, and nothing else', async () => {
        await start();
        const live = await repo.insert(
          record('live', { cover: file(sha('a')), draftingProcess: [file(sha('b'))] }),
          meta('ann', 'create'),
        );
        // The cover is replaced: the old one stays referenced by revision 1.
        await repo.update(
          'live',
          1,
          edit(live, { cover: file(sha('c')) }),
          meta('ann', 'file', ['cover']),
        );
        await repo.insert(
          record('gone', { additionalDocument: [file(sha('d'))] }),
          meta('ann', 'create'),
        );
        await repo.delete('gone', undefined, meta('ann', 'delete'));
        expect([...(await repo.referencedBlobs())].sort()).toEqual(['a', 'b', 'c', 'd'].map(sha));
        expect(await repo.isBlobReferenced(sha('a'))).toBe(true);
        expect(await repo.isBlobReferenced(sha('e'))).toBe(false);

        await repo.pruneRevisions({ keepSince: clock + DAY, keepNewest: 1 });
        await repo.purge({ portfolioId: 'gone' });
        expect([...(await repo.referencedBlobs())].sort()).toEqual(['b', 'c'].map(sha));
        expect(await repo.isBlobReferenced(sha('a'))).toBe(false);
        expect(await repo.isBlobReferenced(sha('d'))).toBe(false);
      });
    });

    describe('durability', () => {
      it('keeps records, history, trash, tombstones, the feed and seq across a reopen', async () => {
        await start();
        await withRevisions('a', 2);
        await withRevisions('b', 1);
        await repo.delete('b', undefined, meta('ann', 'delete'));
        await repo.insert(record('c'), meta('ann', 'create'));
        await repo.delete('c', undefined, meta('ann', 'delete'));
        await repo.purge({ portfolioId: 'c' });
        const before = {
          a: await repo.get('a'),
          history: await repo.revisions('a', 10, null),
          trash: await repo.listTrash(10, null),
          feed: await repo.changesSince(0, 100),
          libraryId: repo.libraryId,
        };
        repo = await backend.reopen();
        expect(await repo.get('a')).toEqual(before.a);
        expect(await repo.revisions('a', 10, null)).toEqual(before.history);
        expect(await repo.listTrash(10, null)).toEqual(before.trash);
        expect(await repo.changesSince(0, 100)).toEqual(before.feed);
        expect(repo.libraryId).toBe(before.libraryId);
        const next = await repo.insert(record('d'), meta('ann', 'create'));
        expect(next.seq).toBe(before.feed.next + 1);
      });
    });
  });
}
