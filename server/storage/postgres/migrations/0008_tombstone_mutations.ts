import type { MigrationBuilder } from 'node-pg-migrate';

/*
 * Schema version 8: a tombstone keeps the sync mutations applied to the portfolio it stands for
 * (the `syncApplied` of its last record), so a replica replaying a create after the purge gets the
 * stored result instead of a second portfolio (DESIGN §10). Tombstones written before stay
 * without (NULL): nothing of theirs was kept.
 */
export function up(pgm: MigrationBuilder): void {
  pgm.sql('ALTER TABLE tombstones ADD COLUMN sync_applied json');
}

/** Schema changes only go forward: an older release refuses a newer database instead. */
export const down = false;
