/**
 * The list's prepared statements: a bounded number per connection (the one forgotten is
 * deallocated, and prepared again when it comes back), on connections of their own whose plans
 * are made once for any values, while every other statement keeps PostgreSQL's default.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listScope, parseFilter, parseOrderBy } from '../../../server/domain/list-query';
import { openDatabase, type Database } from '../../../server/storage/postgres/database';
import { PgPortfolioRepository } from '../../../server/storage/postgres/pg-portfolio-repository';
import { PreparedStatements } from '../../../server/storage/postgres/prepared-statements';
import { portfolioRecord } from '../../helpers/portfolio-record';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../../helpers/postgres';

const SUITE = 'PostgreSQL prepared list statements';
const unavailable = await postgresUnavailable(SUITE);

describe.skipIf(unavailable)(SUITE, () => {
  let testDatabase: TestDatabase;
  let database: Database;

  beforeAll(async () => {
    testDatabase = await createTestDatabase();
    database = await openDatabase(testDatabase.url);
  });

  afterAll(async () => {
    await database?.close();
    await testDatabase?.drop();
  });

  /** The statements a pool's one connection holds prepared. */
  const preparedOn = async (pool: pg.Pool) =>
    (await pool.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements')).rows
      .map((row) => row.statement)
      .sort();

  it('keeps at most its limit per connection, and prepares a forgotten text again', async () => {
    const pool = new pg.Pool({ connectionString: testDatabase.url, max: 1 });
    try {
      const statements = new PreparedStatements(pool, 2);
      const texts = [
        'SELECT $1::int + 1 AS n',
        'SELECT $1::int + 2 AS n',
        'SELECT $1::int + 3 AS n',
      ];
      for (const [index, text] of texts.entries())
        expect((await statements.query<{ n: number }>(text, [10])).rows[0]!.n).toBe(11 + index);
      expect(await preparedOn(pool)).toEqual([texts[1], texts[2]]);
      // The first was deallocated: it runs again, prepared anew in place of the oldest.
      expect((await statements.query<{ n: number }>(texts[0]!, [20])).rows[0]!.n).toBe(21);
      expect(await preparedOn(pool)).toEqual([texts[0], texts[2]]);
    } finally {
      await pool.end();
    }
  });

  it('plans generically on the list pool only', async () => {
    const setting = async (pool: pg.Pool) =>
      (await pool.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode')).rows[0]!
        .plan_cache_mode;
    expect(await setting(database.listPool)).toBe('force_generic_plan');
    expect(await setting(database.pool)).toBe('auto');
  });

  it('runs a list of exact filters prepared on the list pool, others as before', async () => {
    const listPool = new pg.Pool({ connectionString: testDatabase.url, max: 1 });
    try {
      const repository = await PgPortfolioRepository.open(database.pool, { listPool });
      const meta = { by: 'ann', time: 1, command: 'create', changedFields: [] };
      await repository.insert(portfolioRecord('p1', { category: 'Art' }), meta);
      const list = (filter: string) =>
        repository.query({
          ...listScope(parseOrderBy('createdTime'), parseFilter(filter, 'admin'), false),
          after: null,
          limit: 10,
        });
      // (A pool of node-pg's own types: the total arrives as text.)
      expect(Number((await list('category:Art')).total)).toBe(1);
      expect(await preparedOn(listPool)).toHaveLength(1);
      // A title's substring is planned with its value, outside the list pool.
      expect((await list('projectTitle:x')).items).toHaveLength(0);
      expect(await preparedOn(listPool)).toHaveLength(1);
    } finally {
      await listPool.end();
    }
  });
});
