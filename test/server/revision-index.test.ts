import { rm } from 'node:fs/promises';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { revisionKey } from '../../server/storage/embedded/portfolio-layout';
import { RevisionIndex } from '../../server/storage/embedded/revision-index';
import { Store } from '../../server/storage/embedded/store';
import { makeTempDir } from '../helpers/test-server';

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function openStore(): Promise<Store> {
  const dir = await makeTempDir('portfolio-revision-index-');
  dirs.push(dir);
  const store = await Store.open({ dataDir: dir });
  stores.push(store);
  return store;
}

const put = (portfolioId: string, revision: number) =>
  ({
    type: 'put',
    col: 'revisions',
    key: revisionKey(portfolioId, revision),
    value: { portfolioId, revision },
  }) as const;
const del = (portfolioId: string, revision: number) =>
  ({ type: 'del', col: 'revisions', key: revisionKey(portfolioId, revision) }) as const;

/** What the index must answer: the kept revisions of each portfolio, read from the store. */
function expected(store: Store): Map<string, number[]> {
  const kept = new Map<string, number[]>();
  for (const { portfolioId, revision } of store
    .collection<{ portfolioId: string; revision: number }>('revisions')
    .values())
    kept.set(portfolioId, [...(kept.get(portfolioId) ?? []), revision]);
  for (const list of kept.values()) list.sort((a, b) => a - b);
  return kept;
}

describe('RevisionIndex', () => {
  // A portfolio's single revision is kept as a number, several as a list: every change between
  // the two forms must still answer every kept revision, ascending.
  it('answers the kept revisions of each portfolio, ascending, across adds and removes', async () => {
    const store = await openStore();
    const index = new RevisionIndex(store);
    const ids = ['a', 'b', 'c'];
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            id: fc.constantFrom(...ids),
            revision: fc.integer({ min: 1, max: 6 }),
            add: fc.boolean(),
          }),
          { maxLength: 40 },
        ),
        async (steps) => {
          for (const { id, revision, add } of steps)
            await store.commit([add ? put(id, revision) : del(id, revision)]);
          const kept = expected(store);
          for (const id of ids) expect(index.of(id)).toEqual(kept.get(id) ?? []);
          expect(new Map([...index.portfolios()].map(([id, list]) => [id, [...list]]))).toEqual(
            kept,
          );
          // A fresh index built from the same store answers the same.
          const rebuilt = new RevisionIndex(store);
          for (const id of ids) expect(rebuilt.of(id)).toEqual(kept.get(id) ?? []);
          await store.commit(
            ids.flatMap((id) => index.of(id).map((revision) => del(id, revision))),
          );
        },
      ),
      { numRuns: 60 },
    );
  });

  it('keeps one revision, then several, then one again', async () => {
    const store = await openStore();
    const index = new RevisionIndex(store);
    await store.commit([put('p', 1)]);
    expect(index.of('p')).toEqual([1]);
    await store.commit([put('p', 3), put('p', 2)]);
    expect(index.of('p')).toEqual([1, 2, 3]);
    await store.commit([del('p', 1), del('p', 3)]);
    expect(index.of('p')).toEqual([2]);
    await store.commit([put('p', 4)]);
    expect(index.of('p')).toEqual([2, 4]);
    await store.commit([del('p', 2), del('p', 4)]);
    expect(index.of('p')).toEqual([]);
    expect([...index.portfolios()]).toEqual([]);
  });
});
