import type { MigrationBuilder } from 'node-pg-migrate';

/*
 * Schema version 6: each portfolio's title as plain text, for the list's items. Before, a list
 * read it back from its sort key (a bytea of UTF-16 code units, hex-encoded on the wire), or from
 * the JSON record, which the database must parse whole to take one key (about 20 µs a row). The
 * existing rows take theirs from their record in one rewrite of the table (its indexes rebuilt
 * once), not an update of every row that would leave each old version behind.
 */
export function up(pgm: MigrationBuilder): void {
  pgm.sql(`
    ALTER TABLE portfolios ADD COLUMN project_title text;
    ALTER TABLE portfolios
      ALTER COLUMN project_title TYPE text USING record ->> 'projectTitle',
      ALTER COLUMN project_title SET NOT NULL;
  `);
}

/** Schema changes only go forward: an older release refuses a newer database instead. */
export const down = false;
