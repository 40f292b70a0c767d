/**
 * Migration 0006 gives portfolios written before it their title as a column of its own, taken
 * from their records, so an upgraded database lists titles at once.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { listScope, parseFilter, parseOrderBy } from '../../../server/domain/list-query';
import { openDatabase, type Database } from '../../../server/storage/postgres/database';
import { PgPortfolioRepository } from '../../../server/storage/postgres/pg-portfolio-repository';
import { portfolioRecord } from '../../helpers/portfolio-record';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../../helpers/postgres';

const SUITE = 'PostgreSQL schema 6 (project_title) on a database of schema 5';
const unavailable = await postgresUnavailable(SUITE);

const TITLES = ['Crème Brûlée', '😀 smile', 'back\\slash "quoted"', 'Plain'];

describe.skipIf(unavailable)(SUITE, () => {
  let testDatabase: TestDatabase;
  let database: Database | undefined;
  afterAll(async () => {
    await database?.close();
    await testDatabase?.drop();
  });

  it('fills the title of existing portfolios when it migrates', async () => {
    testDatabase = await createTestDatabase();
    database = await openDatabase(testDatabase.url);
    const repo = await PgPortfolioRepository.open(database.pool);
    const meta = { by: 'ann', time: 1, command: 'create', changedFields: [] };
    for (const [index, title] of TITLES.entries())
      await repo.insert(portfolioRecord(`p${index}`, { projectTitle: title }), meta);
    // Back to schema 5: without the column, as a database an older release left.
    await database.pool.query(`ALTER TABLE portfolios DROP COLUMN project_title;
      DROP INDEX portfolios_category_lower_created_pick, portfolios_category_lower_modified_pick,
        portfolios_category_lower_title_pick, portfolios_created_pick, portfolios_modified_pick;
      CREATE INDEX portfolios_created ON portfolios (created_time, portfolio_id);
      CREATE INDEX portfolios_modified ON portfolios (modified_time, portfolio_id);
      CREATE INDEX portfolios_category_created ON portfolios (category, created_time, portfolio_id);
      CREATE INDEX portfolios_category_modified ON portfolios (category, modified_time, portfolio_id);
      CREATE INDEX portfolios_category_title ON portfolios (category, title_key, portfolio_id);
      ALTER TABLE tombstones DROP COLUMN sync_applied;
      ALTER TABLE portfolios DROP COLUMN category_lower, DROP COLUMN general_tag,
        DROP COLUMN occasion;
      DROP TABLE shares;
      DELETE FROM schema_migrations
        WHERE name IN ('0006_project_title', '0007_pick_in_order_indexes',
          '0008_tombstone_mutations', '0009_facets', '0010_shares')`);
    await database.close();
    database = await openDatabase(testDatabase.url);
    const upgraded = await PgPortfolioRepository.open(database.pool, {
      listPool: database.listPool,
    });
    const page = await upgraded.query({
      ...listScope(parseOrderBy('createdTime'), parseFilter('category:Art', 'admin'), false),
      after: null,
      limit: 10,
      fields: ['portfolioId', 'projectTitle'],
    });
    expect(page.items.map((item) => item.projectTitle).sort()).toEqual([...TITLES].sort());
    // Written from now on with every record.
    await upgraded.insert(portfolioRecord('p9', { projectTitle: 'New one' }), meta);
    const { rows } = await database.pool.query(
      'SELECT portfolio_id, project_title FROM portfolios ORDER BY portfolio_id',
    );
    expect(rows.map((row: { project_title: string }) => row.project_title)).toEqual([
      ...TITLES,
      'New one',
    ]);
  });
});
