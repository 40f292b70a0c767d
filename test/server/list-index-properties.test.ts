import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FilterKey, OrderKey, PortfolioRecord } from '../../shared';
import { listScope, type Cursor, type OrderTerm } from '../../server/domain/list-query';
import { PageTokens } from '../../server/domain/page-token';
import { matchesAllTerms, searchWords } from '../../server/domain/search-text';
import { PortfolioIndex, type IndexOptions } from '../../server/storage/embedded/portfolio-index';
import { hasWordStartingWith, wordsOf } from '../../server/storage/embedded/portfolio-search';
import { Store } from '../../server/storage/embedded/store';

/*
 * The index against the simplest thing that could be right: filter every record, sort them all,
 * slice. Random inserts, updates and deletes go through a real store (the index hears them as
 * the server does, through store.onChange), interleaved with random queries, each paged to the
 * end through real page tokens. Small value domains make ties, shared values and empty answers
 * common.
 */

/** A few ids, so that writes hit the same portfolios; 100 of them spread bitsets over 4 words. */
const idsOf = (count: number) =>
  Array.from({ length: count }, (_, index) => `p${String(index).padStart(2, '0')}`);
const IDS = idsOf(12);
const MANY_IDS = idsOf(100);
const CATEGORIES = ['Art', 'Bau', 'Cad'];
const BARCODES = ['M1', 'M2', 'M3', 'M4'];
const TITLES = ['Café lake', 'cafe', 'Lake house', 'lake', 'Ärger arbor', 'arbor', 'Loft'];
const ORGS = ['Gold', 'Silver'];
const SEARCHES = [['caf'], ['cafe'], ['lake', 'ho'], ['arg'], ['m1'], ['ar', 'lake'], ['zzz']];
const ORDER_KEYS: OrderKey[] = [
  'createdTime',
  'modifiedTime',
  'staffPick',
  'projectTitle',
  'category',
];

const recordArbitrary = (id: string) =>
  fc
    .record({
      category: fc.constantFrom(...CATEGORIES),
      memberBarcode: fc.constantFrom(...BARCODES),
      projectTitle: fc.constantFrom(...TITLES),
      // Duplicates too: a portfolio is once in its partition, however often it names the value.
      relativeCategory: fc.array(fc.constantFrom(...CATEGORIES), { maxLength: 3 }),
      certificateByOrg: fc.subarray(ORGS),
      readyToBuy: fc.constantFrom('yes', 'no'),
      staffPick: fc.boolean(),
      published: fc.boolean(),
      active: fc.boolean(),
      createdTime: fc.integer({ min: 0, max: 5 }),
      modifiedTime: fc.integer({ min: 0, max: 5 }),
    })
    .map((fields): PortfolioRecord => ({
      portfolioId: id,
      aboutProject: '',
      projectDetail: '',
      projectLanuching: '',
      occasion: [],
      referenceStyling: [],
      generalTag: [],
      certificateDesc: '',
      cover: null,
      draftingProcess: [],
      additionalDocument: [],
      revision: 1,
      ...fields,
    }));

const FILTER_VALUES: Record<string, fc.Arbitrary<string[]>> = {
  category: fc.subarray(CATEGORIES, { minLength: 1, maxLength: 2 }),
  memberBarcode: fc.subarray(BARCODES, { minLength: 1, maxLength: 2 }),
  relativeCategory: fc.subarray(CATEGORIES, { minLength: 1, maxLength: 2 }),
  certificateByOrg: fc.subarray(ORGS, { minLength: 1 }),
  readyToBuy: fc.subarray(['yes', 'no'], { minLength: 1 }),
  staffPick: fc.subarray(['true', 'false'], { minLength: 1 }),
  published: fc.subarray(['true', 'false'], { minLength: 1 }),
  active: fc.subarray(['true', 'false'], { minLength: 1 }),
  projectTitle: fc.subarray(['caf', 'LAKE', 'r'], { minLength: 1 }),
};

/** Up to three keys: more would leave almost every answer empty. */
const filterArbitrary = fc
  .uniqueArray(fc.constantFrom(...Object.keys(FILTER_VALUES)), { maxLength: 3 })
  .chain((keys) =>
    fc.tuple(...keys.map((key) => FILTER_VALUES[key]!.map((values) => [key, values] as const))),
  )
  .map((pairs) => new Map(pairs) as Map<FilterKey, string[]>);

const orderArbitrary = fc
  .uniqueArray(fc.constantFrom(...ORDER_KEYS), { minLength: 1, maxLength: 2 })
  .chain((keys) =>
    fc.tuple(...keys.map((key) => fc.boolean().map((descending) => ({ key, descending })))),
  ) as fc.Arbitrary<OrderTerm[]>;

const queryArbitrary = fc.record({
  order: orderArbitrary,
  filter: filterArbitrary,
  visibleOnly: fc.boolean(),
  search: fc.option(fc.constantFrom(...SEARCHES), { freq: 3 }),
  pageSize: fc.integer({ min: 1, max: 7 }),
});
type Query = typeof queryArbitrary extends fc.Arbitrary<infer T> ? T : never;

const operationArbitrary = (ids: readonly string[]) =>
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc
        .constantFrom(...ids)
        .chain((id) => recordArbitrary(id).map((record) => ({ type: 'put' as const, record }))),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...ids).map((id) => ({ type: 'delete' as const, id })),
    },
    { weight: 2, arbitrary: fc.nat().map((pick) => ({ type: 'query' as const, pick })) },
  );

/**
 * A few queries per run, each asked again and again between writes: that is what exercises the
 * trees and totals kept up to date on writes (a query asked once only tests a fresh build).
 */
const runArbitrary = (ids: readonly string[], maxOperations: number, minOperations = 1) =>
  fc.record({
    queries: fc.array(queryArbitrary, { minLength: 1, maxLength: 4 }),
    operations: fc.array(operationArbitrary(ids), {
      minLength: minOperations,
      maxLength: maxOperations,
    }),
  });

// ---------------------------------------------------------------- the model

function matchesFilter(record: PortfolioRecord, filter: ReadonlyMap<FilterKey, readonly string[]>) {
  for (const [key, values] of filter) {
    const value = record[key as keyof PortfolioRecord];
    const ok =
      key === 'projectTitle'
        ? values.some((needle) => record.projectTitle.toLowerCase().includes(needle.toLowerCase()))
        : Array.isArray(value)
          ? value.some((item) => values.includes(item as string))
          : values.includes(String(value));
    if (!ok) return false;
  }
  return true;
}

function matchesSearch(record: PortfolioRecord, terms: readonly string[] | null) {
  if (!terms) return true;
  const text = [
    record.projectTitle,
    record.aboutProject,
    record.projectDetail,
    ...record.generalTag,
    ...record.occasion,
    record.memberBarcode,
  ].join(' ');
  const words = searchWords(text);
  return terms.every((term) => words.some((word) => word.startsWith(term)));
}

function compareBy(order: readonly OrderTerm[]) {
  const text = (value: string) => [value.toLowerCase(), value];
  return (a: PortfolioRecord, b: PortfolioRecord) => {
    for (const { key, descending } of order) {
      const k = key as OrderKey;
      const [x, y] =
        k === 'projectTitle' || k === 'category'
          ? [text(a[k]), text(b[k])]
          : [[Number(a[k])], [Number(b[k])]];
      for (let index = 0; index < x.length; index++)
        if (x[index] !== y[index]) return (x[index]! < y[index]! ? -1 : 1) * (descending ? -1 : 1);
    }
    return a.portfolioId < b.portfolioId ? -1 : a.portfolioId > b.portfolioId ? 1 : 0;
  };
}

function naiveList(records: Iterable<PortfolioRecord>, query: Query): string[] {
  return [...records]
    .filter((record) => !query.visibleOnly || (record.published && record.active))
    .filter((record) => matchesFilter(record, query.filter))
    .filter((record) => matchesSearch(record, query.search))
    .sort(compareBy(query.order))
    .map((record) => record.portfolioId);
}

// ---------------------------------------------------------------- the property

describe('PortfolioIndex against a naive filter-and-sort', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'list-index-properties-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  let run = 0;
  const check =
    (options: IndexOptions = {}, { preload = false } = {}) =>
    async ({ queries, operations }: { queries: Query[]; operations: Operation[] }) => {
      const store = await Store.open({ dataDir: join(dir, `run-${run++}`) });
      try {
        const records = store.collection<PortfolioRecord>('portfolios');
        // Preloaded: the portfolios are there before the index, as at a start (the word index
        // then waits for its build, and searches before it test the text, then finish it).
        if (preload)
          for (const id of IDS) {
            const record = operations.find(
              (operation) => operation.type === 'put' && operation.record.portfolioId === id,
            );
            if (record?.type === 'put')
              await store.commit([
                { type: 'put', col: 'portfolios', key: id, value: record.record },
              ]);
          }
        const index = new PortfolioIndex(records, store, options);
        const tokens = PageTokens.withSecret(PageTokens.newSecret());
        const writes: Array<Promise<void>> = [];
        for (const operation of operations) {
          if (operation.type === 'put') {
            writes.push(
              store.commit([
                {
                  type: 'put',
                  col: 'portfolios',
                  key: operation.record.portfolioId,
                  value: operation.record,
                },
              ]),
            );
          } else if (operation.type === 'delete') {
            if (records.has(operation.id))
              writes.push(store.commit([{ type: 'del', col: 'portfolios', key: operation.id }]));
          } else {
            const query = queries[operation.pick % queries.length]!;
            const expected = naiveList(records.values(), query);
            const scope = listScope(query.order, query.filter, query.visibleOnly, query.search);
            const seen: string[] = [];
            let after: Cursor | null = null;
            for (let pages = 0; ; pages++) {
              const page = index.query({ ...scope, after, limit: query.pageSize });
              expect(page.total).toBe(expected.length);
              seen.push(...page.items.map((record) => record.portfolioId));
              // Each item is the portfolio as it is now, not as a tree saw it before a change.
              for (const item of page.items) expect(item).toBe(records.get(item.portfolioId));
              if (page.next === null) break;
              expect(page.items).toHaveLength(query.pageSize);
              after = tokens.decode(tokens.encode(page.next, scope), scope);
              expect(pages).toBeLessThan(MANY_IDS.length);
            }
            expect(seen).toEqual(expected);
          }
        }
        await Promise.all(writes);
      } finally {
        await store.close();
      }
    };

  it('answers every query with the same items, order and total, paging to the end', async () => {
    await fc.assert(fc.asyncProperty(runArbitrary(IDS, 80), check()), { numRuns: 300 });
  }, 120_000);

  // Totals of combinations are counted once, then kept up to date: by intersecting bitsets or by
  // walking the smallest side, depending on its size. Each way on its own:
  it('keeps the same totals when every new total intersects bitsets', async () => {
    const run = runArbitrary(IDS, 80);
    await fc.assert(fc.asyncProperty(run, check({ smallSideShare: 0 })), { numRuns: 150 });
  }, 120_000);

  it('keeps the same totals when every new total walks the smallest side', async () => {
    const run = runArbitrary(IDS, 80);
    await fc.assert(fc.asyncProperty(run, check({ smallSideShare: Infinity })), { numRuns: 150 });
  }, 120_000);

  it('answers the same when the words of the search index keep their portfolios as bitsets', async () => {
    const run = runArbitrary(IDS, 80);
    await fc.assert(fc.asyncProperty(run, check({ wordBitsFrom: 1 })), { numRuns: 150 });
  }, 120_000);

  // A search before the background build of the word index is done tests the portfolios' text.
  it('answers the same when searches come before the word index is built', async () => {
    const run = runArbitrary(IDS, 80);
    await fc.assert(fc.asyncProperty(run, check({ searchNeverBuilt: true })), { numRuns: 150 });
  }, 120_000);

  it('answers the same when the portfolios are there before the index (a start)', async () => {
    const run = runArbitrary(IDS, 80);
    await fc.assert(fc.asyncProperty(run, check({}, { preload: true })), { numRuns: 150 });
  }, 120_000);

  // Slots past the first 32-bit word of a bitset, given again after deletes.
  it('answers the same over 100 portfolios (bitsets of several words)', async () => {
    await fc.assert(fc.asyncProperty(runArbitrary(MANY_IDS, 400, 300), check()), { numRuns: 30 });
  }, 180_000);
});

type Operation =
  | { type: 'put'; record: PortfolioRecord }
  | { type: 'delete'; id: string }
  | { type: 'query'; pick: number };

const emptyTexts = {
  projectTitle: '',
  aboutProject: '',
  projectDetail: '',
  generalTag: ['Tag-one'],
  occasion: [],
  memberBarcode: 'M0001',
} as unknown as PortfolioRecord;

describe('hasWordStartingWith', () => {
  it('answers as the words of the portfolio would', () => {
    const text = fc.stringMatching(/^[A-Za-z0-9 .,'é-]{0,30}$/);
    fc.assert(
      fc.property(text, text, fc.stringMatching(/^[a-z0-9é]{1,4}$/), (title, detail, term) => {
        const record = { ...emptyTexts, projectTitle: title, projectDetail: detail };
        const [folded] = searchWords(term);
        if (folded === undefined) return;
        const words = wordsOf(record);
        expect(hasWordStartingWith(record, folded)).toBe(matchesAllTerms(words, [folded]));
        expect(hasWordStartingWith(record, folded, true)).toBe(words.has(folded));
      }),
      { numRuns: 2000 },
    );
  });
});
