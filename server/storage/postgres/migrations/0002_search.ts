import type { MigrationBuilder } from 'node-pg-migrate';
import type { PortfolioRecord } from '../../../../shared';
import { searchColumns } from '../search-sql';

/*
 * Schema version 2: full-text `q` (DESIGN §4) in SQL.
 *
 * The words of a portfolio are made in JavaScript by the very function the embedded index uses
 * (server/domain/search-text.ts), not by a PostgreSQL text-search parser, so both backends split,
 * fold case and strip accents identically by construction. They are stored as one text per
 * portfolio, ` word word … ` (each word once, spaces around every word; words hold only letters
 * and digits), so "some word begins with t" is `LIKE '% t%'` and "some word is t" is
 * `LIKE '% t %'`: byte comparisons, the same in every collation. A trigram GIN index serves the
 * LIKE; the LIKE itself rechecks every candidate, so the index only narrows, never decides.
 *
 * Existing rows are filled in here, in batches, by the same JavaScript; a later change to how
 * words are made would ship as a new migration that recomputes the columns.
 */
const BATCH = 1000;

export async function up(pgm: MigrationBuilder): Promise<void> {
  await pgm.db.query(`
    ALTER TABLE portfolios
      ADD COLUMN search_words text COLLATE "C",
      ADD COLUMN title_words text COLLATE "C"`);
  let after = '';
  for (;;) {
    const { rows } = await pgm.db.query(
      `SELECT portfolio_id, record FROM portfolios WHERE portfolio_id > $1
       ORDER BY portfolio_id LIMIT ${BATCH}`,
      [after],
    );
    if (rows.length === 0) break;
    const records = rows.map((row: { record: PortfolioRecord }) => row.record);
    const columns = records.map(searchColumns);
    await pgm.db.query(
      `UPDATE portfolios SET search_words = s.search_words, title_words = s.title_words
       FROM unnest($1::text[], $2::text[], $3::text[]) AS s(portfolio_id, search_words, title_words)
       WHERE portfolios.portfolio_id = s.portfolio_id`,
      [
        records.map((record) => record.portfolioId),
        columns.map((column) => column.search_words),
        columns.map((column) => column.title_words),
      ],
    );
    after = records.at(-1)!.portfolioId;
  }
  await pgm.db.query(`
    ALTER TABLE portfolios
      ALTER COLUMN search_words SET NOT NULL,
      ALTER COLUMN title_words SET NOT NULL;
    CREATE INDEX portfolios_search_words ON portfolios USING gin (search_words gin_trgm_ops)`);
}

/** Schema changes only go forward: an older release refuses a newer database instead. */
export const down = false;
