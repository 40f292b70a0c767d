/**
 * The list (DESIGN §4) in SQL answers exactly what the embedded index answers: the same items in
 * the same order on every page, the same totals and the same cursors, over data made to find the
 * differences (case, accents, characters outside the BMP, equal keys, LIKE's own wildcards).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PortfolioRecord, Role } from '../../../shared';
import {
  listScope,
  parseFilter,
  parseOrderBy,
  parseSearch,
} from '../../../server/domain/list-query';
import type {
  ListPage,
  ListRequest,
} from '../../../server/repositories/portfolio-repository-contract';
import {
  PortfolioNotFoundError,
  type PortfolioRepository,
} from '../../../server/repositories/portfolio-repository-contract';
import { EmbeddedPortfolioRepository } from '../../../server/storage/embedded/embedded-portfolio-repository';
import { exportPostgres, importPostgres } from '../../../server/storage/library-transfer';
import { openDatabase, type Database } from '../../../server/storage/postgres/database';
import { listStatement } from '../../../server/storage/postgres/list-sql';
import { PgPortfolioRepository } from '../../../server/storage/postgres/pg-portfolio-repository';
import { Store } from '../../../server/storage/embedded/store';
import { portfolioRecord } from '../../helpers/portfolio-record';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../../helpers/postgres';

const SUITE = 'PostgreSQL list answers as the embedded index';
const unavailable = await postgresUnavailable(SUITE);

/** Texts whose order differs between naive collations and JavaScript's code-unit order. */
const TITLES = [
  'apple',
  'Apple',
  'APPLE',
  'apple pie',
  'Äpfel',
  'äpfel',
  'zebra',
  'Zebra',
  'éclair',
  'Eclair',
  'ß straße',
  'İstanbul',
  '😀 smile',
  '\uFF21 fullwidth A',
  '\uE000 private use',
  '100% cotton',
  'under_score',
  'back\\slash',
  'a',
  'A',
];
const CATEGORIES = ['Art', 'art', 'Design', 'Ärger', '😀', 'Zoo'];
const TAGS = ['red', 'blue', 'Red', 'green'];
/** Free text for `q`: accents, case, shared prefixes, words that are also in titles. */
const PHRASES = [
  'Red apples and pears',
  'APPLE-pie recipe',
  'Crème brûlée, café',
  'cafe au lait',
  'Straße im Grünen',
  'istanbul nights',
  'ÉCLAIRS à la carte',
  'zebra_stripes 100%',
  '',
];

/** A deterministic spread of records: many equal keys, so ties are decided by portfolioId. */
function records(count: number): PortfolioRecord[] {
  let seed = 7;
  /** mulberry32: a small seeded generator, so every run tests the same data. */
  const next = (n: number) => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
  const pick = <T>(list: readonly T[]) => list[next(list.length)]!;
  return Array.from({ length: count }, (_, index) =>
    portfolioRecord(`p${String(next(1000)).padStart(3, '0')}-${index}`, {
      memberBarcode: `M${next(5)}`,
      category: pick(CATEGORIES),
      relativeCategory: TAGS.filter(() => next(3) === 0),
      projectTitle: `${pick(TITLES)}${next(4) === 0 ? '' : ` ${next(3)}`}`,
      readyToBuy: pick(['', 'yes', 'no']),
      certificateByOrg: TAGS.filter(() => next(5) === 0),
      staffPick: next(4) === 0,
      createdTime: 1_700_000_000_000 + next(40) * 1000,
      modifiedTime: 1_700_000_000_000 + next(40) * 1000,
      published: next(3) !== 0,
      active: next(5) !== 0,
      aboutProject: pick(PHRASES),
      projectDetail: pick(PHRASES),
      generalTag: TAGS.filter(() => next(4) === 0),
      occasion: next(3) === 0 ? [pick(PHRASES)] : [],
    }),
  );
}

/** A list's small fields (bench/list-workload.ts), each read from a column of its own. */
const FIELDS: ListRequest['fields'] = ['portfolioId', 'projectTitle', 'category', 'staffPick'];

const ORDERS = [
  undefined,
  'createdTime-',
  'modifiedTime',
  'projectTitle',
  'projectTitle-',
  'category',
  'category-,projectTitle',
  // Keys of one direction: the page starts at the token by a row comparison.
  'category,projectTitle',
  'modifiedTime-,projectTitle-',
  'staffPick-,createdTime',
  'staffPick,modifiedTime-,projectTitle-',
];

const FILTERS: Array<[string | undefined, Role]> = [
  [undefined, 'viewer'],
  [undefined, 'admin'],
  ['category:Art', 'admin'],
  ['category:Art,category:😀', 'viewer'],
  ['projectTitle:apple', 'admin'],
  ['projectTitle:ÄPFEL,projectTitle:zeb', 'admin'],
  ['projectTitle:%', 'admin'],
  ['projectTitle:_', 'admin'],
  ['projectTitle:\\\\', 'admin'],
  ['projectTitle:😀', 'viewer'],
  ['relativeCategory:red', 'admin'],
  ['relativeCategory:red,relativeCategory:Red,certificateByOrg:blue', 'admin'],
  ['staffPick:true', 'viewer'],
  ['staffPick:true,staffPick:false', 'admin'],
  ['published:false,active:true', 'admin'],
  ['memberBarcode:M1,readyToBuy:yes', 'admin'],
  ['readyToBuy:', 'admin'],
  ['category:nothing', 'admin'],
  // One value of a key the order also names: the order walks the filter's index without it.
  ['category:Art,staffPick:false', 'admin'],
  ['category:😀,staffPick:true', 'viewer'],
  ['category:Zoo,category:Zoo', 'admin'],
  ['category:Art,category:Zoo,staffPick:true', 'admin'],
  ['staffPick:false,staffPick:false', 'admin'],
  // Totals the database keeps (one key), and counted ones (an array key's values overlap).
  ['published:false', 'admin'],
  ['certificateByOrg:red', 'viewer'],
  ['relativeCategory:red,relativeCategory:blue', 'admin'],
  // PostgreSQL text cannot hold NUL: such values match nothing there, as nothing here.
  ['category:Art,category:a\u0000b', 'admin'],
  ['projectTitle:\u0000,relativeCategory:red', 'admin'],
];

/** `q` values: whole words, prefixes, case and accents folded, several terms, other fields. */
const SEARCHES = [
  'apple',
  'app',
  'APPLE pie',
  'äpfel',
  'apfel',
  'eclair',
  'Éclairs',
  'cafe',
  'CAFÉ au',
  'stra',
  'istanbul',
  'i',
  'red',
  'red green',
  'zebra',
  'stripes',
  '100',
  'm1',
  'nothing',
  'smile',
  '\uFF41',
];
const SEARCH_ORDERS = ['relevance', undefined, 'projectTitle-', 'staffPick,category-'];
const SEARCH_FILTERS: Array<[string | undefined, Role]> = [
  [undefined, 'admin'],
  [undefined, 'viewer'],
  ['category:Art,category:Zoo', 'admin'],
  ['projectTitle:apple', 'admin'],
];

/** Every page of one query: items, totals and cursors, as the repository answers them. */
async function walk(
  repository: PortfolioRepository,
  order: string | undefined,
  filter: string | undefined,
  role: Role,
  pageSize: number,
  q?: string,
  fields?: ListRequest['fields'],
): Promise<ListPage[]> {
  const search = parseSearch(q);
  const scope = listScope(
    parseOrderBy(order, search !== null),
    parseFilter(filter, role),
    role === 'viewer',
    search,
  );
  const pages: ListPage[] = [];
  let after: ListPage['next'] = null;
  do {
    const page: ListPage = await repository.query({ ...scope, after, limit: pageSize, fields });
    pages.push(page);
    after = page.next;
  } while (after && pages.length < 1000);
  return pages;
}

describe.skipIf(unavailable)(SUITE, () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let dataDir: string;
  let store: Store;
  let embedded: EmbeddedPortfolioRepository;
  let postgres: PgPortfolioRepository;

  beforeAll(async () => {
    testDatabase = await createTestDatabase();
    database = await openDatabase(testDatabase.url);
    postgres = await PgPortfolioRepository.open(database.pool, { listPool: database.listPool });
    dataDir = await mkdtemp(join(tmpdir(), 'portfolio-list-'));
    store = await Store.open({ dataDir });
    embedded = await EmbeddedPortfolioRepository.open(store);
    for (const record of records(240)) {
      const meta = { by: 'ann', time: record.createdTime, command: 'create', changedFields: [] };
      await embedded.insert(record, meta);
      await postgres.insert(record, meta);
    }
  });

  afterAll(async () => {
    await database?.close();
    await testDatabase?.drop();
    await store?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it.each(ORDERS.map((order) => [order ?? '(default)', order]))(
    'orders by %s exactly as the embedded index, every filter, every page, whole or by fields',
    async (_name, order) => {
      for (const [filter, role] of FILTERS) {
        for (const pageSize of [7, 1000]) {
          const expected = await walk(embedded, order, filter, role, pageSize);
          // Whole records, and the keys a list asks for read from their columns.
          for (const fields of [undefined, FIELDS]) {
            const actual = await walk(postgres, order, filter, role, pageSize, undefined, fields);
            const context = `orderBy=${order} filter=${filter} role=${role} pageSize=${pageSize} fields=${fields}`;
            expect(actual.length, context).toBe(expected.length);
            const keys = fields ?? ['portfolioId'];
            const pick = (item: Partial<PortfolioRecord>) =>
              Object.fromEntries(keys.map((key) => [key, item[key]]));
            for (const [index, page] of expected.entries()) {
              const got = actual[index]!;
              expect(got.items.map(pick), context).toEqual(page.items.map(pick));
              expect(got.total, context).toBe(page.total);
              expect(got.next, context).toEqual(page.next);
            }
          }
        }
      }
    },
  );

  it.each(SEARCH_ORDERS.map((order) => [order ?? '(default)', order]))(
    'searches (q) exactly as the embedded index, ordered by %s, every filter, every page',
    async (_name, order) => {
      let found = 0;
      for (const q of SEARCHES) {
        for (const [filter, role] of SEARCH_FILTERS) {
          for (const pageSize of [5, 1000]) {
            const expected = await walk(embedded, order, filter, role, pageSize, q);
            const actual = await walk(postgres, order, filter, role, pageSize, q);
            const context = `q=${q} orderBy=${order} filter=${filter} role=${role} pageSize=${pageSize}`;
            expect(actual.length, context).toBe(expected.length);
            for (const [index, page] of expected.entries()) {
              const got = actual[index]!;
              expect(
                got.items.map((item) => item.portfolioId),
                context,
              ).toEqual(page.items.map((item) => item.portfolioId));
              expect(got.total, context).toBe(page.total);
              expect(got.next, context).toEqual(page.next);
            }
            found += expected[0]!.total;
          }
        }
      }
      // The data is made so that the searches find something (and not everything).
      expect(found).toBeGreaterThan(100);
    },
  );

  it('recounts a total once another instance changed the library', async () => {
    const other = await PgPortfolioRepository.open(database.pool);
    const scope = listScope(parseOrderBy(undefined), parseFilter('category:Zoo', 'admin'), false);
    const before = await postgres.query({ ...scope, after: null, limit: 5 });
    expect((await postgres.query({ ...scope, after: null, limit: 5 })).total).toBe(before.total);
    const [template] = records(1);
    await other.insert(
      { ...template!, portfolioId: 'zoo-extra', category: 'Zoo' },
      { by: 'bob', time: 1, command: 'create', changedFields: [] },
    );
    expect((await postgres.query({ ...scope, after: null, limit: 5 })).total).toBe(
      before.total + 1,
    );
    await other.delete('zoo-extra', undefined, {
      by: 'bob',
      time: 2,
      command: 'delete',
      changedFields: [],
    });
    expect((await postgres.query({ ...scope, after: null, limit: 5 })).total).toBe(before.total);
  });

  it('finds nothing under an id with NUL, which PostgreSQL cannot store, and fails no statement', async () => {
    const id = 'p\u0000';
    const meta = { by: 'ann', time: 1, command: 'save', changedFields: [] };
    expect(await postgres.get(id)).toBeUndefined();
    expect(await postgres.getTrashed(id)).toBeUndefined();
    expect(await postgres.revision(id, 1)).toBeUndefined();
    expect(await postgres.revisions(id, 10, null)).toEqual({ items: [], total: 0, next: null });
    expect(await postgres.purge({ portfolioId: id })).toEqual([]);
    const [template] = records(1);
    await expect(
      postgres.update(id, 1, { ...template!, portfolioId: id, revision: 2 }, meta),
    ).rejects.toBeInstanceOf(PortfolioNotFoundError);
    await expect(postgres.delete(id, undefined, meta)).rejects.toBeInstanceOf(
      PortfolioNotFoundError,
    );
  });

  it.each([
    ...['createdTime', 'modifiedTime-', 'projectTitle-', 'category,projectTitle'].map((order) => [
      'category:Art,staffPick:true',
      order,
    ]),
    ['staffPick:true', 'createdTime'],
    ['staffPick:true', 'modifiedTime-'],
  ])('walks %s ordered by %s testing staffPick on the index entries', async (filter, order) => {
    // The list pool's generic plan cannot tell the rare staffPick value from the common one:
    // with staffPick tested only on the rows fetched, a page of a category's staff picks read
    // the whole category. Only index scans here, as the bench's 100k rows make the planner
    // choose: which index, and where staffPick is tested, is what this checks.
    const request: ListRequest = {
      ...listScope(parseOrderBy(order), parseFilter(filter!, 'admin'), false),
      after: null,
      limit: 20,
      fields: ['portfolioId'],
    };
    const { text, values } = listStatement(request, undefined);
    const client = await database.listPool.connect();
    try {
      await client.query('SET enable_seqscan = off; SET enable_bitmapscan = off');
      await client.query(`PREPARE picks AS ${text}`);
      const literal = (value: unknown): string =>
        Array.isArray(value)
          ? client.escapeLiteral(`{${value.map((item) => JSON.stringify(item)).join(',')}}`)
          : typeof value === 'string'
            ? client.escapeLiteral(value)
            : String(value);
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN EXECUTE picks(${values.map(literal).join(', ')})`,
      );
      const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
      expect(plan, plan).toMatch(/Index Cond: .*staff_pick = \$\d+/);
      expect(plan, plan).not.toMatch(/Filter: \(staff_pick/);
    } finally {
      await client.query('DEALLOCATE picks; RESET enable_seqscan; RESET enable_bitmapscan');
      client.release();
    }
  });

  it('answers the records themselves, byte for byte as stored', async () => {
    const [expected] = await walk(embedded, 'projectTitle', undefined, 'admin', 1000);
    const [actual] = await walk(postgres, 'projectTitle', undefined, 'admin', 1000);
    expect(JSON.stringify(actual!.items)).toBe(JSON.stringify(expected!.items));
  });

  it('keeps the totals it does not count exact through every kind of write', async () => {
    const meta = (command: string) => ({ by: 'ann', time: 5, command, changedFields: [] });
    const both = async (change: (repository: PortfolioRepository) => Promise<unknown>) => {
      await change(embedded);
      await change(postgres);
    };
    const all = records(240);
    const [moved, restored, purged] = [all[3]!, all[10]!, all[20]!];
    // Moved to another category, unpublished, staff pick flipped, tags changed (one twice).
    await both(async (repository) => {
      const current = (await repository.get(moved.portfolioId))!;
      await repository.update(
        moved.portfolioId,
        current.revision,
        {
          ...current,
          category: current.category === 'Zoo' ? 'Art' : 'Zoo',
          published: !current.published,
          staffPick: !current.staffPick,
          relativeCategory: ['red', 'red', 'green'],
          certificateByOrg: [],
          revision: current.revision + 1,
        },
        meta('save'),
      );
    });
    // To the trash and back; to the trash and purged, then its id used again elsewhere.
    await both(async (repository) => {
      await repository.delete(restored.portfolioId, undefined, meta('delete'));
      const entry = (await repository.getTrashed(restored.portfolioId))!;
      await repository.restoreFromTrash(
        restored.portfolioId,
        { ...entry.snapshot, revision: entry.revision + 1 },
        meta('restore'),
      );
      await repository.delete(purged.portfolioId, undefined, meta('delete'));
      await repository.purge({ portfolioId: purged.portfolioId });
      await repository.insert(
        { ...purged, category: '😀', memberBarcode: 'M9', staffPick: true },
        meta('create'),
      );
    });
    const filters: Array<[string | undefined, Role]> = [
      [undefined, 'admin'],
      [undefined, 'viewer'],
      ['category:Zoo', 'admin'],
      ['category:Art', 'viewer'],
      ['category:😀,category:Zoo', 'admin'],
      ['staffPick:true', 'admin'],
      ['staffPick:false', 'viewer'],
      ['published:false', 'admin'],
      ['relativeCategory:red', 'admin'],
      ['relativeCategory:green', 'viewer'],
      ['certificateByOrg:red', 'admin'],
      ['memberBarcode:M9', 'admin'],
      ['readyToBuy:yes', 'viewer'],
      ['category:Zoo,staffPick:true', 'admin'],
      ['category:Zoo,category:😀,staffPick:false', 'viewer'],
      ['category:Art,staffPick:true,staffPick:false', 'admin'],
    ];
    const totals = async (repository: PortfolioRepository) => {
      const found: number[] = [];
      for (const [filter, role] of filters)
        found.push((await walk(repository, 'category,projectTitle', filter, role, 1000))[0]!.total);
      return found;
    };
    const expected = await totals(embedded);
    expect(await totals(postgres)).toEqual(expected);

    // A bulk import (as `storage migrate --force` does) empties the table first: the counts too.
    await importPostgres(database.pool, await exportPostgres(database.pool));
    expect(await totals(postgres)).toEqual(expected);
    const { rows } = await database.pool.query<{ key: string; value: string }>(`
      SELECT key, value FROM portfolio_counts WHERE total < 0 OR visible < 0 OR visible > total`);
    expect(rows).toEqual([]);
  });
});
