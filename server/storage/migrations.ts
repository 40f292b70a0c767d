import type { SnapshotData } from './snapshot-file';

/** Version of the data layout this build writes. */
export const SCHEMA_VERSION = 1;

/**
 * `MIGRATIONS[n]` turns a version-n database into version n+1. Each runs once on open, in order,
 * and the result is written as a new snapshot straight away.
 */
const MIGRATIONS: Record<number, (data: SnapshotData) => SnapshotData> = {};

export class UnsupportedSchemaVersionError extends Error {
  override readonly name = 'UnsupportedSchemaVersionError';
}

export function migrate(data: SnapshotData): SnapshotData {
  if (data.version > SCHEMA_VERSION) {
    throw new UnsupportedSchemaVersionError(
      `The database was written by a newer Portfolio Manager (data version ${data.version}; this build reads up to ${SCHEMA_VERSION}).`,
    );
  }
  let current = data;
  while (current.version < SCHEMA_VERSION) {
    const step = MIGRATIONS[current.version];
    if (!step)
      throw new UnsupportedSchemaVersionError(`No migration from data version ${current.version}`);
    current = { ...step(current), version: current.version + 1 };
  }
  return current;
}
