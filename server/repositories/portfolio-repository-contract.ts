/**
 * The portfolio repository contract (DESIGN §9, §12): every storage backend (the embedded store
 * today, PostgreSQL next) implements exactly this, and one contract suite (test/server/contract/)
 * runs against each. Nothing here knows HTTP: failures are the typed errors below, which the
 * service turns into API errors.
 *
 * Invariants every backend keeps:
 * - Every committed change (insert, update, delete, restore, purge) gets the next `seq`, a
 *   per-library integer that only grows, assigned in commit order and durable with the change.
 * - `update` and `delete` are compare-and-set on `revision`: a lost update is impossible.
 * - A change is acknowledged (the promise resolves) only once it is durable.
 * - Records handed out are immutable snapshots; a change stores a new object.
 */
import type { AppliedMutation, FacetKey, PortfolioRecord } from '../../shared';
import type { FacetCounts } from '../domain/facets';
import type { Cursor, ListScope, SortValue } from '../domain/list-query';

export type { Cursor, FacetCounts, SortValue };

/** What the facets count (DESIGN §16): the list's matches, without an order or a page. */
export interface FacetRequest extends Omit<ListScope, 'order' | 'orderKey'> {
  keys: readonly FacetKey[];
}

/** One page of the list (DESIGN §4), as the list use case asks a backend for it. */

export interface ListRequest<K extends ListedKey = ListedKey> extends ListScope {
  /** Start strictly after this position (the previous page's last item). */
  after: Cursor | null;
  limit: number;
  /**
   * A hint: the record keys the caller reads from each item. A backend may then answer items
   * holding only these keys (and perhaps others), and must answer the same items, order, total
   * and cursor as without it; absent, every item is the whole record. The embedded index hands
   * out its records as they are, and ignores it.
   */
  fields?: readonly K[];
}

/** Every key of a record a list can be asked for through `fields`. */
export type ListedKey = keyof PortfolioRecord;

export interface ListPage<K extends ListedKey = ListedKey> {
  /** Whole records, or with `fields` at least those keys of them (see ListRequest.fields). */
  items: Array<Pick<PortfolioRecord, K>>;
  /** Portfolios matching filter, search and visibility, on every page. */
  total: number;
  /** Position of the last item when more follow; null on the last page. */
  next: Cursor | null;
}

/** A portfolio as stored: the record plus who made and last changed it, and its change `seq`. */
export interface StoredPortfolio extends PortfolioRecord {
  seq: number;
  createdBy: string;
  modifiedBy: string;
}

/** What the service says about a change; the repository stores it with the revision. */
export interface ChangeMeta {
  /** Username of the caller (or `system` for jobs and migrations). */
  by: string;
  /** Milliseconds since the epoch; for display only, nothing decides by it. */
  time: number;
  /** create | save | publish | unpublish | activate | deactivate | file | delete | restore | … */
  command: string;
  /** Top-level record keys this change altered (`cover`, `draftingProcess`, … for files). */
  changedFields: string[];
}

/** One kept revision of a portfolio: a full snapshot (file metadata, never bytes). */
export interface RevisionEntry {
  portfolioId: string;
  revision: number;
  seq: number;
  modifiedTime: number;
  modifiedBy: string;
  command: string;
  changedFields: string[];
  snapshot: StoredPortfolio;
}

/**
 * One kept revision as another library made it (ZIP import, DESIGN §11): its number, author,
 * time, command and changed fields, and the whole record as it was then. The seq is this
 * library's to give.
 */
export interface ImportedRevision {
  revision: number;
  modifiedTime: number;
  modifiedBy: string;
  command: string;
  changedFields: string[];
  snapshot: Omit<StoredPortfolio, 'seq'>;
}

export interface TrashEntry {
  portfolioId: string;
  projectTitle: string;
  category: string;
  deletedTime: number;
  deletedBy: string;
  /** The revision the portfolio had when it was deleted. */
  revision: number;
  seq: number;
  /** The portfolio as it was when deleted: a restore brings exactly this back. */
  snapshot: StoredPortfolio;
}

/**
 * What is kept of a purged portfolio while its tombstone is: enough for the feed, and the sync
 * mutations applied to it, so a replayed one is answered, never applied again (DESIGN §10).
 */
export interface PurgedPortfolio {
  portfolioId: string;
  revision: number;
  seq: number;
  syncApplied: AppliedMutation[];
}

/** One entry of the change feed, collapsed to the record's latest state. */
export type Change =
  | {
      seq: number;
      portfolioId: string;
      revision: number;
      deleted: false;
      portfolio: StoredPortfolio;
    }
  | { seq: number; portfolioId: string; revision: number; deleted: true };

export interface ChangePage {
  changes: Change[];
  /** The `since` to pass next time: the seq of the last change returned, or `since` if none. */
  next: number;
  hasMore: boolean;
}

/** Keyset paging for history and trash: the newest first. */
export interface Page<T> {
  items: T[];
  total: number;
  /** Opaque cursor for the next page, or null on the last one. */
  next: string | null;
}

export interface RetentionPolicy {
  /** Keep every revision newer than this (ms since the epoch). */
  keepSince: number;
  /** And always the newest N revisions of each portfolio. */
  keepNewest: number;
}

// ---- Errors (no HTTP here: the service maps them) ----

export class RepositoryError extends Error {}

export class PortfolioNotFoundError extends RepositoryError {
  override readonly name = 'PortfolioNotFoundError';
  constructor(readonly portfolioId: string) {
    super(`No portfolio "${portfolioId}".`);
  }
}

export class PortfolioIdTakenError extends RepositoryError {
  override readonly name = 'PortfolioIdTakenError';
  constructor(readonly portfolioId: string) {
    super(`The portfolioId "${portfolioId}" is already taken.`);
  }
}

export class RevisionConflictError extends RepositoryError {
  override readonly name = 'RevisionConflictError';
  constructor(
    readonly portfolioId: string,
    readonly currentRevision: number,
    readonly expectedRevision: number,
  ) {
    super(
      `The portfolio is at revision ${currentRevision}, not ${expectedRevision}; reload it and try again.`,
    );
  }
}

/** A page cursor that this backend did not hand out (or of another listing). */
export class InvalidCursorError extends RepositoryError {
  override readonly name = 'InvalidCursorError';
  constructor(readonly cursor: string) {
    super(`"${cursor}" is not a page token of this list.`);
  }
}

/** `changesSince` was asked for a seq older than the oldest tombstone the backend still keeps. */
export class ResyncRequiredError extends RepositoryError {
  override readonly name = 'ResyncRequiredError';
  constructor(
    readonly since: number,
    readonly oldestKnown: number,
  ) {
    super(`Changes since ${since} are no longer known (kept from ${oldestKnown}); resync.`);
  }
}

/**
 * `since` is past the last change this library has: the library was restored from an older copy
 * (same libraryId, fewer changes), so whoever holds that cursor must read again from 0.
 */
export class FeedBehindError extends ResyncRequiredError {
  override readonly message: string;
  constructor(since: number, lastSeq: number, oldestKnown: number) {
    super(since, oldestKnown);
    this.message =
      `Changes since ${since} are unknown: this library's last change is ${lastSeq} ` +
      '(was it restored from an older copy?); resync.';
  }
}

/**
 * The contract. `next` records passed to insert/update are complete portfolio records as the
 * domain built them; the repository stamps `seq`, `createdBy`/`modifiedBy` (from meta.by) and
 * answers the stored record.
 */
export interface PortfolioRepository {
  /** Random id made when the library (data directory or database) was created. */
  readonly libraryId: string;

  get(portfolioId: string): Promise<StoredPortfolio | undefined>;

  /**
   * The list (DESIGN §4): one page of live portfolios, with the total of matches. With
   * `request.fields`, each item may hold only those keys (the rest need not be read or sent).
   */
  query<K extends ListedKey = ListedKey>(request: ListRequest<K>): Promise<ListPage<K>>;

  /**
   * Facets (DESIGN §16): for each key asked for, each stored value (as stored: the spellings of a
   * case-folded value apart, "" too) with the number of the list's matches that have it. An
   * array counts a portfolio once under each distinct element. Values without a match are left
   * out. The same matches as `query` with the same filter, search and visibility.
   */
  facets(request: FacetRequest): Promise<FacetCounts>;

  /**
   * Optional. A number that changes with every change to a live portfolio, read synchronously:
   * list answers built at one version may be served again until it changes. A backend that
   * cannot tell (others write to it too) leaves it out, and its list answers are never cached.
   */
  listVersion?(): number;

  /** Optional. Starts building what `query` needs in the background (called once listening). */
  prepareListIndex?(): void;

  /** Throws PortfolioIdTakenError if the id is live or in the trash. */
  insert(record: PortfolioRecord, meta: ChangeMeta): Promise<StoredPortfolio>;

  /**
   * Creates a portfolio this library does not have, with the history another library kept of it
   * (ZIP import, DESIGN §11): `revisions` ascend by revision number and the last one is the live
   * record. Ids, revisions, authors and times are kept as given; each entry gets the next seq of
   * this library, in one commit. Throws PortfolioIdTakenError if the id is live or in the trash.
   */
  insertWithHistory(revisions: ImportedRevision[]): Promise<StoredPortfolio>;

  /**
   * Compare-and-set: stores `next` (whose `revision` must be expectedRevision + 1) only if the
   * stored revision is still `expectedRevision`. Throws PortfolioNotFoundError or
   * RevisionConflictError and changes nothing otherwise.
   */
  update(
    portfolioId: string,
    expectedRevision: number,
    next: PortfolioRecord,
    meta: ChangeMeta,
  ): Promise<StoredPortfolio>;

  /** Moves the portfolio to the trash (compare-and-set as update; undefined = any revision). */
  delete(
    portfolioId: string,
    expectedRevision: number | undefined,
    meta: ChangeMeta,
  ): Promise<TrashEntry>;

  /** Brings a trashed portfolio back as `next` (a new revision). Throws if not in the trash. */
  restoreFromTrash(
    portfolioId: string,
    next: PortfolioRecord,
    meta: ChangeMeta,
  ): Promise<StoredPortfolio>;

  /**
   * The live portfolios holding at least one open conflict (sync, DESIGN §10), by portfolioId.
   * Kept in an index of their own: the cost follows the conflicted few, never the library.
   */
  listConflicted(): Promise<StoredPortfolio[]>;

  getTrashed(portfolioId: string): Promise<TrashEntry | undefined>;
  listTrash(pageSize: number, cursor: string | null): Promise<Page<TrashEntry>>;
  /**
   * Removes trashed portfolios deleted before `deletedBefore` (or one id); their history too. A
   * tombstone keeps each one's id, revision and applied sync mutations (`getPurged`).
   */
  purge(options: { deletedBefore?: number; portfolioId?: string }): Promise<string[]>;
  /** A purged portfolio whose tombstone is still kept, or undefined. */
  getPurged(portfolioId: string): Promise<PurgedPortfolio | undefined>;

  /** Kept revisions, newest first. */
  revisions(
    portfolioId: string,
    pageSize: number,
    cursor: string | null,
  ): Promise<Page<RevisionEntry>>;
  revision(portfolioId: string, revision: number): Promise<RevisionEntry | undefined>;
  /** Drops revisions the policy no longer keeps (the current revision is always kept). */
  pruneRevisions(policy: RetentionPolicy): Promise<number>;

  /**
   * Feed: changes after `since`, in seq order, collapsed per portfolio; only durable changes.
   * Throws ResyncRequiredError when `since` (other than 0, a full read) is older than the oldest
   * tombstone still kept.
   */
  changesSince(since: number, limit: number): Promise<ChangePage>;
  /**
   * Forgets tombstones of portfolios purged before `purgedBefore` (keep them at least as long as
   * the trash keeps portfolios); a `since` below the newest forgotten seq then needs a resync.
   */
  forgetTombstones(purgedBefore: number): Promise<number>;

  /** sha256 of every blob a live, trashed or kept record references (blob collection). */
  referencedBlobs(): Promise<Set<string>>;
  /** Whether one blob is referenced now (checked again right before a blob is removed). */
  isBlobReferenced(sha256: string): Promise<boolean>;
}
