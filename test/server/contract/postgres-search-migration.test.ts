/**
 * Migration 0002 fills the search columns of portfolios written before it, by the same words
 * the embedded index makes, so an upgraded database answers `q` at once.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { listScope, parseOrderBy, parseSearch } from '../../../server/domain/list-query';
import { openDatabase, type Database } from '../../../server/storage/postgres/database';
import { PgPortfolioRepository } from '../../../server/storage/postgres/pg-portfolio-repository';
import { portfolioRecord } from '../../helpers/portfolio-record';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../../helpers/postgres';

/** What migrations 0005, 0007, 0009 and 0010 add, undone (to stand for an older schema). */
export const UNDO_LIST_INDEXES = `
  DROP TABLE shares;
  DROP FUNCTION portfolio_counts_apply() CASCADE;
  DROP TABLE portfolio_counts;
  ALTER TABLE portfolios DROP COLUMN category_lower, DROP COLUMN general_tag,
    DROP COLUMN occasion;
  DROP INDEX portfolios_staff_pick_created, portfolios_staff_pick_modified, portfolios_staff_pick_title,
    portfolios_staff_pick_category_title, portfolios_category_title_order;
  CREATE INDEX portfolios_category ON portfolios (category);
  DROP INDEX portfolios_created_pick, portfolios_modified_pick;
  CREATE INDEX portfolios_created ON portfolios (created_time, portfolio_id);
  CREATE INDEX portfolios_modified ON portfolios (modified_time, portfolio_id);`;

const SUITE = 'PostgreSQL schema 2 (search) on a database of schema 1';
const unavailable = await postgresUnavailable(SUITE);

describe.skipIf(unavailable)(SUITE, () => {
  let testDatabase: TestDatabase;
  let database: Database | undefined;
  afterAll(async () => {
    await database?.close();
    await testDatabase?.drop();
  });

  it('fills the search words of existing portfolios when it migrates', async () => {
    testDatabase = await createTestDatabase();
    database = await openDatabase(testDatabase.url);
    const repo = await PgPortfolioRepository.open(database.pool);
    const meta = { by: 'ann', time: 1, command: 'create', changedFields: [] };
    // More than one batch of the migration (1000), so its paging is exercised too.
    for (let start = 0; start < 1100; start += 100)
      await Promise.all(
        Array.from({ length: 100 }, (_, index) =>
          repo.insert(
            portfolioRecord(`p${String(start + index).padStart(4, '0')}`, {
              projectTitle: start + index === 1050 ? 'Crème Brûlée' : 'Plain',
              generalTag: start + index === 7 ? ['BRULEE'] : [],
            }),
            meta,
          ),
        ),
      );
    // Back to schema 1: without the columns, as a database an older release left.
    await database.pool.query(`
      DROP TABLE devices;
      DROP INDEX portfolios_conflicted;
      ALTER TABLE portfolios DROP COLUMN search_words, DROP COLUMN title_words;
      ${UNDO_LIST_INDEXES}
      ALTER TABLE portfolios DROP COLUMN project_title;
      ALTER TABLE tombstones DROP COLUMN sync_applied;
      DELETE FROM schema_migrations WHERE name IN ('0002_search', '0003_devices',
        '0004_conflicts_index', '0005_list_indexes', '0006_project_title',
        '0007_pick_in_order_indexes', '0008_tombstone_mutations', '0009_facets',
        '0010_shares')`);
    await database.close();
    database = await openDatabase(testDatabase.url);
    const upgraded = await PgPortfolioRepository.open(database.pool);
    const search = parseSearch('brul');
    const page = await upgraded.query({
      ...listScope(parseOrderBy('relevance', true), new Map(), false, search),
      after: null,
      limit: 10,
    });
    expect(page.items.map((item) => item.portfolioId)).toEqual(['p1050', 'p0007']);
    const { rows } = await database.pool.query(
      'SELECT count(*) AS missing FROM portfolios WHERE search_words IS NULL',
    );
    expect(rows[0].missing).toBe(0);
  });
});
