import type { MigrationBuilder } from 'node-pg-migrate';

/*
 * Schema version 9: facets, and a category filter that ignores case (DESIGN §16).
 *
 * - `category_lower`: the category in JavaScript's lower case (written by the repository, like
 *   title_lower), what the category filter compares; the existing rows take theirs from a map of
 *   the library's distinct categories made in JavaScript, so both backends fold alike. The
 *   category indexes of migration 0007 are remade on it.
 * - `general_tag`, `occasion`: the record's arrays as typed columns, so their facets are counted
 *   without parsing the JSON record (about 20 µs a row).
 * - `portfolio_counts` (migration 0005) now counts `category` and the `staffPick,category` pairs
 *   by the lower-cased category (the filter's totals), the stored spellings under
 *   `categorySpelling`, and `generalTag` and `occasion` too: the facets of a whole library (the
 *   form's pick-lists) are read from it, never counted.
 */
const facets = (row: string) => `LATERAL (
    VALUES ('', ''), ('category', ${row}.category_lower), ('categorySpelling', ${row}.category),
      ('memberBarcode', ${row}.member_barcode),
      ('readyToBuy', ${row}.ready_to_buy), ('staffPick', ${row}.staff_pick::text),
      ('published', ${row}.published::text), ('active', ${row}.active::text),
      ('staffPick,category', ${row}.staff_pick::text || ':' || ${row}.category_lower)
    UNION ALL (SELECT DISTINCT 'relativeCategory', unnest(${row}.relative_category))
    UNION ALL (SELECT DISTINCT 'certificateByOrg', unnest(${row}.certificate_by_org))
    UNION ALL (SELECT DISTINCT 'generalTag', unnest(${row}.general_tag))
    UNION ALL (SELECT DISTINCT 'occasion', unnest(${row}.occasion))
  ) f(key, value)`;

export async function up(pgm: MigrationBuilder): Promise<void> {
  const { rows } = await pgm.db.query('SELECT DISTINCT category FROM portfolios');
  const categories = rows.map((row: { category: string }) => row.category);
  await pgm.db.query(
    `
    ALTER TABLE portfolios ADD COLUMN category_lower text COLLATE "C",
      ADD COLUMN general_tag text[] COLLATE "C", ADD COLUMN occasion text[] COLLATE "C";
    `,
  );
  // The counts are made again below: the backfill need not move them row by row.
  await pgm.db.query('ALTER TABLE portfolios DISABLE TRIGGER portfolio_counts_update');
  await pgm.db.query(
    `UPDATE portfolios p SET category_lower = m.lower,
       general_tag = ARRAY(SELECT json_array_elements_text(p.record -> 'generalTag')),
       occasion = ARRAY(SELECT json_array_elements_text(p.record -> 'occasion'))
     FROM unnest($1::text[], $2::text[]) m(category, lower)
     WHERE p.category = m.category`,
    [categories, categories.map((category) => category.toLowerCase())],
  );
  await pgm.db.query(`
    ALTER TABLE portfolios ENABLE TRIGGER portfolio_counts_update;
    ALTER TABLE portfolios ALTER COLUMN category_lower SET NOT NULL,
      ALTER COLUMN general_tag SET NOT NULL, ALTER COLUMN occasion SET NOT NULL;
    CREATE INDEX portfolios_category_lower_created_pick
      ON portfolios (category_lower, created_time, portfolio_id, staff_pick);
    CREATE INDEX portfolios_category_lower_modified_pick
      ON portfolios (category_lower, modified_time, portfolio_id, staff_pick);
    CREATE INDEX portfolios_category_lower_title_pick
      ON portfolios (category_lower, title_key, portfolio_id, staff_pick);
    DROP INDEX portfolios_category_created_pick, portfolios_category_modified_pick,
      portfolios_category_title_pick;

    CREATE OR REPLACE FUNCTION portfolio_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
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

    DELETE FROM portfolio_counts;
    INSERT INTO portfolio_counts (key, value, total, visible)
    SELECT f.key, f.value, count(*), count(*) FILTER (WHERE p.published AND p.active)
    FROM portfolios p, ${facets('p')} GROUP BY f.key, f.value;
    ANALYZE portfolios;
  `);
}

/** Schema changes only go forward: an older release refuses a newer database instead. */
export const down = false;
