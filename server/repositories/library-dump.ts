/**
 * A whole library as plain records, the same whatever backend holds it (DESIGN §11): what a
 * backup holds, what `portfolio storage migrate` moves, and what each backend's bulk import takes.
 * Part of the backend seam's contract (StorageBackend.dumpLibrary); built and written by
 * storage/library-transfer.ts.
 */
import type { AppliedMutation } from '../../shared';
import type { RevisionEntry, StoredPortfolio, TrashEntry } from './portfolio-repository-contract';
import type { UserRecord } from './user-repository-contract';

/** The library's identity and counters. */
export interface LibraryMeta {
  libraryId: string;
  /** The seq of the newest committed change. */
  seq: number;
  /** The newest seq of a forgotten tombstone: a feed `since` below it needs a resync. */
  horizon: number;
}

/** What remains of a purged portfolio, for the change feed. */
export interface Tombstone {
  portfolioId: string;
  revision: number;
  seq: number;
  deletedTime: number;
  purgedTime: number;
  /** The sync mutations applied to it (absent in tombstones written before they were kept). */
  syncApplied?: AppliedMutation[];
}

export interface LibraryDump {
  library: LibraryMeta;
  portfolios: StoredPortfolio[];
  /** Every kept revision with its full snapshot, the current ones included. */
  revisions: RevisionEntry[];
  trash: TrashEntry[];
  tombstones: Tombstone[];
  users: UserRecord[];
}
