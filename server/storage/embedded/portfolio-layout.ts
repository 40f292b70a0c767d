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
import type {
  RevisionEntry,
  StoredPortfolio,
} from '../../repositories/portfolio-repository-contract';

export type { LibraryMeta, Tombstone } from '../../repositories/library-dump';

export const LIBRARY_KEY = 'library';

/**
 * A revision as stored. The current revision leaves `snapshot` out: the live (or trashed) record
 * is its snapshot, the same object, so history costs no copy of it. When a change supersedes it,
 * the entry is rewritten with the record it had as `snapshot`.
 */
export type StoredRevision = Omit<RevisionEntry, 'snapshot'> & { snapshot?: StoredPortfolio };

export const revisionKey = (portfolioId: string, revision: number) =>
  `${portfolioId}\u0000${revision}`;

/** The author of changes made before authors were recorded (data version 1); shown as unknown. */
export const UNKNOWN_AUTHOR = '';
