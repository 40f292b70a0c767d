import { randomUUID } from 'node:crypto';
import type { PortfolioRecord } from '../../../shared';
import type { StoredPortfolio } from '../../repositories/portfolio-repository-contract';
import {
  LIBRARY_KEY,
  revisionKey,
  UNKNOWN_AUTHOR,
  type LibraryMeta,
  type StoredRevision,
} from './portfolio-layout';
import type { SnapshotData } from './snapshot-file';

/** Version of the data layout this build writes. */
export const SCHEMA_VERSION = 3;

/**
 * Version 1 → 2 (DESIGN §9): every portfolio gets a `seq` (1..n in createdTime order, then
 * portfolioId, so the same directory always migrates the same way), authors it never recorded
 * (UNKNOWN_AUTHOR), and a first revision entry for the revision it has; the library gets its id
 * and seq counter. History starts at the migration: older revisions were never kept.
 */
function addChangeSequence(data: SnapshotData): SnapshotData {
  const records = Object.values(data.collections.portfolios ?? {}) as PortfolioRecord[];
  records.sort(
    (a, b) =>
      a.createdTime - b.createdTime ||
      (a.portfolioId < b.portfolioId ? -1 : a.portfolioId > b.portfolioId ? 1 : 0),
  );
  const portfolios: Record<string, StoredPortfolio> = {};
  const revisions: Record<string, StoredRevision> = {};
  for (const [index, record] of records.entries()) {
    const stored: StoredPortfolio = {
      ...record,
      seq: index + 1,
      createdBy: UNKNOWN_AUTHOR,
      modifiedBy: UNKNOWN_AUTHOR,
    };
    portfolios[record.portfolioId] = stored;
    revisions[revisionKey(record.portfolioId, record.revision)] = {
      portfolioId: record.portfolioId,
      revision: record.revision,
      seq: stored.seq,
      modifiedTime: record.modifiedTime,
      modifiedBy: UNKNOWN_AUTHOR,
      command: 'migrate',
      changedFields: [],
    };
  }
  const library: LibraryMeta = { libraryId: randomUUID(), seq: records.length, horizon: 0 };
  return {
    ...data,
    collections: {
      ...data.collections,
      meta: { ...data.collections.meta, [LIBRARY_KEY]: library },
      portfolios,
      revisions,
      trash: {},
      tombstones: {},
    },
  };
}

/**
 * `MIGRATIONS[n]` turns a version-n database into version n+1. Each runs once on open, in order,
 * and the result is written as a new snapshot straight away.
 */
const MIGRATIONS: Record<number, (data: SnapshotData) => SnapshotData> = {
  1: addChangeSequence,
  // Version 2 → 3 changes the snapshot file only (one line per collection, the revisions
  // parsed on first use: snapshot-file.ts); the records stay as they are.
  2: (data) => data,
};

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
