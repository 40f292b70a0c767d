import type { MigrationBuilder } from 'node-pg-migrate';

/*
 * Schema version 4: the portfolios that hold open sync conflicts (DESIGN §10), found without
 * reading every record. A partial index over the few rows whose record has a `conflicts` array
 * (a record keeps that key only while a conflict is open): `listConflicted` repeats its
 * predicate word for word, so the planner answers from it.
 */
export function up(pgm: MigrationBuilder): void {
  pgm.sql(`
    CREATE INDEX portfolios_conflicted ON portfolios (portfolio_id)
      WHERE json_typeof(record -> 'conflicts') = 'array';
  `);
}

/** Schema changes only go forward: an older release refuses a newer database instead. */
export const down = false;
