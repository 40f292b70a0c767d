import type { MigrationBuilder } from 'node-pg-migrate';

/*
 * Schema version 7: a category's staff picks walked in the index (issue 15). The list's
 * statements run on generic plans (one plan for any values), and a generic plan cannot tell
 * `staff_pick = true` (5 % of rows in the bench) from `false`, so a page of
 * `filter=category:X,staffPick:true` walked the category's order index `(category, <order key>,
 * portfolio_id)` and fetched every row of the category from the table to test staff_pick there:
 * about 20 rows read per row listed, 3–4 ms of the database per page instead of 0.3 ms. The same
 * three indexes now hold staff_pick as a last key column, after portfolio_id: the order they give
 * is the same (portfolio_id is unique), a category-only list walks them as before, and
 * `staff_pick = $n` is tested on the index entries (an index condition), so only matches are
 * fetched. No index is added: writes keep the same number of index entries.
 */
export function up(pgm: MigrationBuilder): void {
  pgm.sql(`
    CREATE INDEX portfolios_category_created_pick
      ON portfolios (category, created_time, portfolio_id, staff_pick);
    CREATE INDEX portfolios_category_modified_pick
      ON portfolios (category, modified_time, portfolio_id, staff_pick);
    CREATE INDEX portfolios_category_title_pick
      ON portfolios (category, title_key, portfolio_id, staff_pick);
    DROP INDEX portfolios_category_created;
    DROP INDEX portfolios_category_modified;
    DROP INDEX portfolios_category_title;
    ANALYZE portfolios;
  `);
}

/** Schema changes only go forward: an older release refuses a newer database instead. */
export const down = false;
