import type { MigrationBuilder } from 'node-pg-migrate';

/*
 * Schema version 7: staff picks tested in the order's index (issue 15). The list's statements
 * run on generic plans (one plan for any values), and a generic plan cannot tell
 * `staff_pick = true` (5 % of rows in the bench) from `false`. So a page of
 * `filter=category:X,staffPick:true` walked the category's order index `(category, <order key>,
 * portfolio_id)` and fetched every row of the category from the table to test staff_pick there
 * (about 20 rows read per row listed: 3–4 ms of the database per page instead of 0.6), and
 * `filter=staffPick:true&orderBy=createdTime` (or `modifiedTime`) walked `(created_time,
 * portfolio_id)` the same way (1.2–1.8 ms instead of 0.4). Those five indexes now hold
 * staff_pick as a last key column, after portfolio_id: the order they give is the same
 * (portfolio_id is unique), the lists they served walk them as before, and `staff_pick = $n` is
 * tested on the index entries (an index condition), so only matches are fetched. No index is
 * added: a write makes as many index entries as before.
 */
export function up(pgm: MigrationBuilder): void {
  pgm.sql(`
    CREATE INDEX portfolios_category_created_pick
      ON portfolios (category, created_time, portfolio_id, staff_pick);
    CREATE INDEX portfolios_category_modified_pick
      ON portfolios (category, modified_time, portfolio_id, staff_pick);
    CREATE INDEX portfolios_category_title_pick
      ON portfolios (category, title_key, portfolio_id, staff_pick);
    CREATE INDEX portfolios_created_pick ON portfolios (created_time, portfolio_id, staff_pick);
    CREATE INDEX portfolios_modified_pick ON portfolios (modified_time, portfolio_id, staff_pick);
    DROP INDEX portfolios_category_created, portfolios_category_modified,
      portfolios_category_title, portfolios_created, portfolios_modified;
    ANALYZE portfolios;
  `);
}

/** Schema changes only go forward: an older release refuses a newer database instead. */
export const down = false;
