import type { MigrationBuilder } from 'node-pg-migrate';

/*
 * Schema version 5: lists at scale (issue 15).
 *
 * Filter + order indexes. A list filtered on one category or on staffPick walks the page in
 * the order's index, starting at the page token's position, and stops after the page: the
 * filter's column first, then the order's key, then the portfolioId tie-break. Descending orders
 * scan the same index backwards (ties sort within equal keys). A single category's
 * `category,projectTitle` order is its title order (list-sql.ts drops a key the filter holds
 * constant), so `(category, title_key, …)` serves it. `(category)` alone is a prefix of
 * `(category, created_time, …)` and goes.
 *
 * Totals kept by the database: `portfolio_counts` holds, per filter key and value, how many live
 * portfolios have it (`total`) and how many of those viewers see (`visible`, published and
 * active); key '' value '' is every portfolio, key 'staffPick,category' the pairs. Statement triggers with transition tables keep it
 * in the same transaction as every write to `portfolios` (a batch of creates updates each count
 * once), so a total of one filter key is read in the list's own statement, exact and the same on
 * every instance, without counting rows. Writers already pass one at a time (the library row), so
 * the few hot rows add no waiting.
 */
/**
 * The (key, value) pairs the portfolio row `row` counts under: an array under each distinct
 * element, and staffPick with category as one pair (`true:Art`; the boolean's text has no colon,
 * so the first one splits it), the staff picks of a category being a list people keep open.
 */
const facets = (row: string) => `LATERAL (
    VALUES ('', ''), ('category', ${row}.category), ('memberBarcode', ${row}.member_barcode),
      ('readyToBuy', ${row}.ready_to_buy), ('staffPick', ${row}.staff_pick::text),
      ('published', ${row}.published::text), ('active', ${row}.active::text),
      ('staffPick,category', ${row}.staff_pick::text || ':' || ${row}.category)
    UNION ALL (SELECT DISTINCT 'relativeCategory', unnest(${row}.relative_category))
    UNION ALL (SELECT DISTINCT 'certificateByOrg', unnest(${row}.certificate_by_org))
  ) f(key, value)`;

export async function up(pgm: MigrationBuilder): Promise<void> {
  await pgm.db.query(`
    CREATE INDEX portfolios_category_created ON portfolios (category, created_time, portfolio_id);
    CREATE INDEX portfolios_category_modified ON portfolios (category, modified_time, portfolio_id);
    CREATE INDEX portfolios_category_title ON portfolios (category, title_key, portfolio_id);
    DROP INDEX portfolios_category;
    CREATE INDEX portfolios_staff_pick_created
      ON portfolios (staff_pick, created_time, portfolio_id);
    CREATE INDEX portfolios_staff_pick_modified
      ON portfolios (staff_pick, modified_time, portfolio_id);
    CREATE INDEX portfolios_staff_pick_title ON portfolios (staff_pick, title_key, portfolio_id);
    CREATE INDEX portfolios_staff_pick_category_title
      ON portfolios (staff_pick, category_key, title_key, portfolio_id);
    CREATE INDEX portfolios_category_title_order
      ON portfolios (category_key, title_key, portfolio_id);

    CREATE TABLE portfolio_counts (
      key text COLLATE "C" NOT NULL,
      value text COLLATE "C" NOT NULL,
      total bigint NOT NULL,
      visible bigint NOT NULL,
      PRIMARY KEY (key, value)
    );

    CREATE FUNCTION portfolio_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'TRUNCATE' THEN
        DELETE FROM portfolio_counts;
      ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO portfolio_counts AS c (key, value, total, visible)
        SELECT f.key, f.value, count(*), count(*) FILTER (WHERE n.published AND n.active)
        FROM new_rows n, ${facets('n')} GROUP BY f.key, f.value
        ON CONFLICT (key, value) DO UPDATE
          SET total = c.total + EXCLUDED.total, visible = c.visible + EXCLUDED.visible;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO portfolio_counts AS c (key, value, total, visible)
        SELECT f.key, f.value, -count(*), -count(*) FILTER (WHERE o.published AND o.active)
        FROM old_rows o, ${facets('o')} GROUP BY f.key, f.value
        ON CONFLICT (key, value) DO UPDATE
          SET total = c.total + EXCLUDED.total, visible = c.visible + EXCLUDED.visible;
      ELSE
        INSERT INTO portfolio_counts AS c (key, value, total, visible)
        SELECT key, value, sum(total), sum(visible) FROM (
          SELECT f.key, f.value, 1 AS total, (n.published AND n.active)::int AS visible
          FROM new_rows n, ${facets('n')}
          UNION ALL
          SELECT f.key, f.value, -1, -(o.published AND o.active)::int
          FROM old_rows o, ${facets('o')}
        ) changes
        GROUP BY key, value HAVING sum(total) <> 0 OR sum(visible) <> 0
        ON CONFLICT (key, value) DO UPDATE
          SET total = c.total + EXCLUDED.total, visible = c.visible + EXCLUDED.visible;
      END IF;
      RETURN NULL;
    END $$;

    CREATE TRIGGER portfolio_counts_insert AFTER INSERT ON portfolios
      REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION portfolio_counts_apply();
    CREATE TRIGGER portfolio_counts_update AFTER UPDATE ON portfolios
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION portfolio_counts_apply();
    CREATE TRIGGER portfolio_counts_delete AFTER DELETE ON portfolios
      REFERENCING OLD TABLE AS old_rows
      FOR EACH STATEMENT EXECUTE FUNCTION portfolio_counts_apply();
    CREATE TRIGGER portfolio_counts_truncate AFTER TRUNCATE ON portfolios
      FOR EACH STATEMENT EXECUTE FUNCTION portfolio_counts_apply();

    INSERT INTO portfolio_counts (key, value, total, visible)
    SELECT f.key, f.value, count(*), count(*) FILTER (WHERE p.published AND p.active)
    FROM portfolios p, ${facets('p')} GROUP BY f.key, f.value;
    ANALYZE portfolios;
  `);
}

/** Schema changes only go forward: an older release refuses a newer database instead. */
export const down = false;
