import type { MigrationBuilder } from 'node-pg-migrate';
import * as initial from './0001_initial';
import * as search from './0002_search';
import * as devices from './0003_devices';
import * as conflictsIndex from './0004_conflicts_index';
import * as listIndexes from './0005_list_indexes';
import * as projectTitle from './0006_project_title';
import * as pickInOrderIndexes from './0007_pick_in_order_indexes';
import * as tombstoneMutations from './0008_tombstone_mutations';
import * as facets from './0009_facets';
import * as shares from './0010_shares';

export interface SchemaMigration {
  /** `NNNN_what`: the number is the schema version the migration brings the database to. */
  name: string;
  up: (pgm: MigrationBuilder) => void | Promise<void>;
  down: false;
}

/**
 * Every migration, oldest first. They are imported, not read from a folder at run time, so they
 * are part of the bundle (out/server/cli.js) and a deploy can never run with a missing file.
 * Add a migration as a new module here; never change one that has shipped.
 */
export const MIGRATIONS: readonly SchemaMigration[] = [
  { name: '0001_initial', ...initial },
  { name: '0002_search', ...search },
  { name: '0003_devices', ...devices },
  { name: '0004_conflicts_index', ...conflictsIndex },
  { name: '0005_list_indexes', ...listIndexes },
  { name: '0006_project_title', ...projectTitle },
  { name: '0007_pick_in_order_indexes', ...pickInOrderIndexes },
  { name: '0008_tombstone_mutations', ...tombstoneMutations },
  { name: '0009_facets', ...facets },
  { name: '0010_shares', ...shares },
];

export const versionOf = (name: string): number => Number.parseInt(name, 10) || 0;

/** The schema version this build brings a database to. */
export const SCHEMA_VERSION = versionOf(MIGRATIONS.at(-1)!.name);
