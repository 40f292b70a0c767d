/**
 * How the embedded store lays out portfolios, their history, the trash and the change feed
 * (DESIGN §9). Shared by the repository and the migration that builds this layout.
 *
 * - `portfolios/<id>`: the live record (StoredPortfolio).
 * - `trash/<id>`: a deleted portfolio (TrashEntry), its record as it was in `snapshot`.
 * - `tombstones/<id>`: what the feed still says about a purged portfolio.
 * - `revisions/<id>\0<revision>`: one kept revision (StoredRevision).
 * - `meta/library`: the library id, the seq counter and the feed horizon (LibraryMeta).
 */
import type { AppliedMutation } from '../../../shared';
import type {
  RevisionEntry,
  StoredPortfolio,
} from '../../repositories/portfolio-repository-contract';

export interface LibraryMeta {
  libraryId: string;
  /** The seq of the newest committed change. */
  seq: number;
  /** The newest seq of a forgotten tombstone: a feed `since` below it needs a resync. */
  horizon: number;
}

export const LIBRARY_KEY = 'library';

/**
 * A revision as stored. The current revision leaves `snapshot` out: the live (or trashed) record
 * is its snapshot, the same object, so history costs no copy of it. When a change supersedes it,
 * the entry is rewritten with the record it had as `snapshot`.
 */
export type StoredRevision = Omit<RevisionEntry, 'snapshot'> & { snapshot?: StoredPortfolio };

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

export const revisionKey = (portfolioId: string, revision: number) =>
  `${portfolioId}\u0000${revision}`;

/** The author of changes made before authors were recorded (data version 1); shown as unknown. */
export const UNKNOWN_AUTHOR = '';
