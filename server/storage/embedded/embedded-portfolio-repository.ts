import { randomUUID } from 'node:crypto';
import type { PortfolioRecord } from '../../../shared';
import { PortfolioIndex } from './portfolio-index';
import {
  type FacetCounts,
  type FacetRequest,
  type ListPage,
  type ListRequest,
} from '../../repositories/portfolio-repository-contract';
import {
  InvalidCursorError,
  PortfolioIdTakenError,
  PortfolioNotFoundError,
  FeedBehindError,
  ResyncRequiredError,
  RevisionConflictError,
  type Change,
  type ChangeMeta,
  type ChangePage,
  type ImportedRevision,
  type Page,
  type PortfolioRepository,
  type PurgedPortfolio,
  type RetentionPolicy,
  type RevisionEntry,
  type StoredPortfolio,
  type TrashEntry,
} from '../../repositories/portfolio-repository-contract';
import { BlobReferences } from './blob-references';
import {
  LIBRARY_KEY,
  revisionKey,
  type LibraryMeta,
  type StoredRevision,
  type Tombstone,
} from './portfolio-layout';
import { RevisionIndex, lowerBound } from './revision-index';
import { ConflictIndex } from './conflict-index';
import { SeqIndex } from './seq-index';
import type { Op, Store } from './store';

/** One record for `applyRemote`: kept at its own revision, or `null` to move it to the trash. */
export interface RemoteEntry {
  portfolioId: string;
  record: (PortfolioRecord & { createdBy?: string; modifiedBy?: string }) | null;
  meta: ChangeMeta;
}

/** What `applyRemote` did with one entry: the stored record (none for a trash move) and its seq. */
export interface AppliedRemote {
  portfolioId: string;
  stored: StoredPortfolio | undefined;
  /** The local seq of the change, or undefined when nothing changed (trash move of no record). */
  seq: number | undefined;
}

export interface EmbeddedRepositoryOptions {
  /** Keep superseded revisions (default). Off: only each portfolio's current revision is kept. */
  history?: boolean;
}

/** Changes written per commit by the bulk jobs (purge, retention): short journal lines. */
const BATCH = 200;

/**
 * The portfolio repository contract over the embedded Store. Every change is one `store.commit`
 * holding the record, its revision entry and the library counter, so they are durable together.
 *
 * Invariants:
 * - Checks (id taken, compare-and-set) and the seq are decided synchronously, in the same tick as
 *   `store.commit` applies the change to memory: seq follows commit order and no two writers
 *   interleave between check and write.
 * - A portfolio is in exactly one place: `portfolios` (live), `trash`, or `tombstones` (purged);
 *   its seq there is the seq of its latest change, which makes the seq index the collapsed feed.
 * - The feed shows only durable changes: a change applied in memory but rolled back by a failed
 *   journal write must never be seen, since its seq is then given to another change.
 */
export class EmbeddedPortfolioRepository implements PortfolioRepository {
  readonly libraryId: string;
  private readonly index: PortfolioIndex;
  private feedIndex: SeqIndex<Change> | null = null;
  private readonly trashBySeq: SeqIndex<string>;
  private revisionIndex: RevisionIndex | null = null;
  private blobReferences: BlobReferences | null = null;
  private conflictIndex: ConflictIndex | null = null;
  private readonly keepHistory: boolean;
  /** The newest seq known durable; the feed stops there. */
  private durableSeq: number;

  private constructor(
    private readonly store: Store,
    options: EmbeddedRepositoryOptions,
  ) {
    this.keepHistory = options.history ?? true;
    this.libraryId = this.library().libraryId;
    this.durableSeq = this.library().seq;
    this.index = store.timeOpening(
      'listIndex',
      () => new PortfolioIndex(store.collection<PortfolioRecord>('portfolios'), store),
    );
    this.trashBySeq = new SeqIndex<string>(store, { trash: (portfolioId) => portfolioId });
  }

  /**
   * The collapsed change feed, the blob reference counts, the kept revisions of each portfolio
   * and the conflicted portfolios are made on first use (a sync client, an upload, a history
   * request or a retention pass, a conflict listing), not at start: at 100k portfolios they took
   * a quarter of a second of opening, before the first list. Each is built from the store as it
   * is then and follows its changes from there, so a late start is exact.
   */
  private get feed(): SeqIndex<Change> {
    return (this.feedIndex ??= new SeqIndex<Change>(this.store, {
      portfolios: (portfolioId, record: StoredPortfolio) => ({
        seq: record.seq,
        portfolioId,
        revision: record.revision,
        deleted: false,
        portfolio: record,
      }),
      trash: (portfolioId, entry: TrashEntry) => tombstoneChange(portfolioId, entry),
      tombstones: (portfolioId, entry: Tombstone) => tombstoneChange(portfolioId, entry),
    }));
  }

  private get blobs(): BlobReferences {
    return (this.blobReferences ??= new BlobReferences(this.store));
  }

  private get history(): RevisionIndex {
    return (this.revisionIndex ??= new RevisionIndex(this.store));
  }

  private get conflicted(): ConflictIndex {
    return (this.conflictIndex ??= new ConflictIndex(this.store));
  }

  /** Opens the repository over an open store; a new library gets its id here. */
  static async open(
    store: Store,
    options: EmbeddedRepositoryOptions = {},
  ): Promise<EmbeddedPortfolioRepository> {
    if (!store.get<LibraryMeta>('meta', LIBRARY_KEY)) {
      const library: LibraryMeta = { libraryId: randomUUID(), seq: 0, horizon: 0 };
      await store.commit([{ type: 'put', col: 'meta', key: LIBRARY_KEY, value: library }]);
    }
    return new EmbeddedPortfolioRepository(store, options);
  }

  async get(portfolioId: string): Promise<StoredPortfolio | undefined> {
    return this.live(portfolioId);
  }

  async query(request: ListRequest): Promise<ListPage> {
    return this.index.query(request);
  }

  async facets(request: FacetRequest): Promise<FacetCounts> {
    return this.index.facets(request);
  }

  listVersion(): number {
    return this.index.version;
  }

  prepareListIndex(): void {
    this.index.startSearchIndex();
  }

  async insert(record: PortfolioRecord, meta: ChangeMeta): Promise<StoredPortfolio> {
    const id = record.portfolioId;
    if (this.live(id) || this.trashed(id)) throw new PortfolioIdTakenError(id);
    const seq = this.library().seq + 1;
    const stored: StoredPortfolio = { ...record, seq, createdBy: meta.by, modifiedBy: meta.by };
    const ops: Op[] = [
      { type: 'put', col: 'portfolios', key: id, value: stored },
      ...this.revisionOps(undefined, stored, meta),
    ];
    // A purged id may be used again: the live record replaces its tombstone in the feed.
    if (this.store.get('tombstones', id)) ops.unshift({ type: 'del', col: 'tombstones', key: id });
    await this.commit(ops, seq);
    return stored;
  }

  async insertWithHistory(revisions: ImportedRevision[]): Promise<StoredPortfolio> {
    const newest = revisions.at(-1)!;
    const id = newest.snapshot.portfolioId;
    if (this.live(id) || this.trashed(id)) throw new PortfolioIdTakenError(id);
    const kept = this.keepHistory ? revisions : [newest];
    let seq = this.library().seq;
    const ops: Op[] = [];
    if (this.store.get('tombstones', id)) ops.push({ type: 'del', col: 'tombstones', key: id });
    let stored: StoredPortfolio | undefined;
    for (const [index, { snapshot, ...entry }] of kept.entries()) {
      seq++;
      const record: StoredPortfolio = { ...snapshot, portfolioId: id, seq };
      // The current revision keeps no snapshot of its own: the live record is it.
      const current = index === kept.length - 1;
      const value: StoredRevision = {
        ...entry,
        portfolioId: id,
        seq,
        ...(!current && { snapshot: record }),
      };
      ops.push({ type: 'put', col: 'revisions', key: revisionKey(id, entry.revision), value });
      if (current) stored = record;
    }
    ops.push({ type: 'put', col: 'portfolios', key: id, value: stored! });
    await this.commit(ops, seq);
    return stored!;
  }

  async update(
    portfolioId: string,
    expectedRevision: number,
    next: PortfolioRecord,
    meta: ChangeMeta,
  ): Promise<StoredPortfolio> {
    const current = this.current(portfolioId, expectedRevision);
    assertFollows(next, expectedRevision);
    const seq = this.library().seq + 1;
    const stored: StoredPortfolio = {
      ...next,
      portfolioId,
      seq,
      createdBy: current.createdBy,
      modifiedBy: meta.by,
    };
    await this.commit(
      [
        // Before the put: the superseded revision embeds the live record as it still is.
        ...this.revisionOps(current, stored, meta, { col: 'portfolios', key: portfolioId }),
        { type: 'put', col: 'portfolios', key: portfolioId, value: stored },
      ],
      seq,
    );
    return stored;
  }

  async delete(
    portfolioId: string,
    expectedRevision: number | undefined,
    meta: ChangeMeta,
  ): Promise<TrashEntry> {
    const current = this.current(portfolioId, expectedRevision);
    const seq = this.library().seq + 1;
    const entry: TrashEntry = {
      portfolioId,
      projectTitle: current.projectTitle,
      category: current.category,
      deletedTime: meta.time,
      deletedBy: meta.by,
      revision: current.revision,
      seq,
      snapshot: current,
    };
    await this.commit(
      [
        { type: 'del', col: 'portfolios', key: portfolioId },
        { type: 'put', col: 'trash', key: portfolioId, value: entry },
      ],
      seq,
    );
    return entry;
  }

  async restoreFromTrash(
    portfolioId: string,
    next: PortfolioRecord,
    meta: ChangeMeta,
  ): Promise<StoredPortfolio> {
    const entry = this.trashed(portfolioId);
    if (!entry) throw new PortfolioNotFoundError(portfolioId);
    assertFollows(next, entry.revision);
    const seq = this.library().seq + 1;
    const stored: StoredPortfolio = {
      ...next,
      portfolioId,
      seq,
      createdBy: entry.snapshot.createdBy,
      modifiedBy: meta.by,
    };
    await this.commit(
      [
        { type: 'del', col: 'trash', key: portfolioId },
        { type: 'put', col: 'portfolios', key: portfolioId, value: stored },
        ...this.revisionOps(entry.snapshot, stored, meta),
      ],
      seq,
    );
    return stored;
  }

  /**
   * Sync (DESIGN §10), beside the contract: stores records as another library (the hub) made
   * them, in one commit with `extraOps` (the replica's base entries and checkpoint). Not a
   * compare-and-set: a record keeps the revision it was given (the hub's, which may be lower
   * than a local draft's), wherever the portfolio is now (live, trash, purged or unknown); a
   * `null` record moves a live portfolio to the trash. Local invariants hold: every entry gets
   * the next local seq, and history keeps ascending revisions (local drafts at or above the
   * given revision are dropped: the hub's revision supersedes them).
   * `extraOps` is called in the same tick with the stored results, so it can record their seqs.
   */
  async applyRemote(
    entries: RemoteEntry[],
    extraOps: (applied: AppliedRemote[]) => Op[] = () => [],
  ): Promise<AppliedRemote[]> {
    let seq = this.library().seq;
    const ops: Op[] = [];
    const applied: AppliedRemote[] = [];
    // Entries of one commit may name one portfolio twice: read through what this batch wrote.
    const written = new Map<string, { live?: StoredPortfolio; trash?: TrashEntry }>();
    const liveOf = (id: string) => (written.has(id) ? written.get(id)!.live : this.live(id));
    const trashOf = (id: string) => (written.has(id) ? written.get(id)!.trash : this.trashed(id));
    for (const { portfolioId: id, record, meta } of entries) {
      const live = liveOf(id);
      const trashed = trashOf(id);
      if (record === null) {
        if (!live) {
          applied.push({ portfolioId: id, stored: undefined, seq: undefined });
          continue;
        }
        seq++;
        const entry: TrashEntry = {
          portfolioId: id,
          projectTitle: live.projectTitle,
          category: live.category,
          deletedTime: meta.time,
          deletedBy: meta.by,
          revision: live.revision,
          seq,
          snapshot: live,
        };
        ops.push(
          { type: 'del', col: 'portfolios', key: id },
          { type: 'put', col: 'trash', key: id, value: entry },
        );
        written.set(id, { trash: entry });
        applied.push({ portfolioId: id, stored: undefined, seq });
        continue;
      }
      seq++;
      const previous = live ?? trashed?.snapshot;
      const stored: StoredPortfolio = {
        ...record,
        portfolioId: id,
        seq,
        createdBy: record.createdBy ?? previous?.createdBy ?? meta.by,
        modifiedBy: record.modifiedBy ?? meta.by,
      };
      if (trashed) ops.push({ type: 'del', col: 'trash', key: id });
      if (this.store.get('tombstones', id)) ops.push({ type: 'del', col: 'tombstones', key: id });
      if (previous && previous.revision < stored.revision && !written.has(id)) {
        const at = live ? { col: 'portfolios' as const, key: id } : undefined;
        ops.push(...this.revisionOps(previous, stored, meta, at));
      } else {
        // The hub's record of the revision this library holds already (its own create, pushed
        // with its history): that revision keeps its author, time, command and changed fields.
        const same =
          previous?.revision === stored.revision && !written.has(id)
            ? this.store.get<StoredRevision>('revisions', revisionKey(id, stored.revision))
            : undefined;
        const kept: ChangeMeta = same
          ? {
              by: same.modifiedBy,
              time: same.modifiedTime,
              command: same.command,
              changedFields: same.changedFields,
            }
          : meta;
        for (const revision of this.history.of(id)) {
          if (revision >= stored.revision)
            ops.push({ type: 'del', col: 'revisions', key: revisionKey(id, revision) });
        }
        ops.push(...this.revisionOps(undefined, stored, kept));
      }
      ops.push({ type: 'put', col: 'portfolios', key: id, value: stored });
      written.set(id, { live: stored });
      applied.push({ portfolioId: id, stored, seq });
    }
    const extra = extraOps(applied);
    if (seq === this.library().seq) {
      if (extra.length > 0) await this.store.commit(extra);
    } else {
      await this.commit([...ops, ...extra], seq);
    }
    return applied;
  }

  async listConflicted(): Promise<StoredPortfolio[]> {
    return this.conflicted
      .ids()
      .map((id) => this.live(id))
      .filter((record) => record !== undefined);
  }

  async getTrashed(portfolioId: string): Promise<TrashEntry | undefined> {
    return this.trashed(portfolioId);
  }

  async listTrash(pageSize: number, cursor: string | null): Promise<Page<TrashEntry>> {
    const before = cursor === null ? undefined : parseCursor(cursor);
    const items: TrashEntry[] = [];
    let more = false;
    for (const [, portfolioId] of this.trashBySeq.before(before)) {
      if (items.length === pageSize) {
        more = true;
        break;
      }
      items.push(this.trashed(portfolioId)!);
    }
    const next = more ? String(items.at(-1)!.seq) : null;
    return { items, total: this.trashBySeq.size, next };
  }

  async purge(options: { deletedBefore?: number; portfolioId?: string }): Promise<string[]> {
    const expired = (entry: TrashEntry) =>
      options.deletedBefore === undefined || entry.deletedTime < options.deletedBefore;
    const candidates =
      options.portfolioId === undefined
        ? [...this.store.collection<TrashEntry>('trash').keys()]
        : [options.portfolioId];
    const purged: string[] = [];
    for (let start = 0; start < candidates.length; start += BATCH) {
      // Built and committed in one tick: an entry restored meanwhile is no longer a candidate.
      const ops: Op[] = [];
      let seq = this.library().seq;
      for (const id of candidates.slice(start, start + BATCH)) {
        const entry = this.trashed(id);
        if (!entry || !expired(entry)) continue;
        seq++;
        ops.push(...this.purgeOps(entry, seq));
        purged.push(id);
      }
      if (ops.length > 0) await this.commit(ops, seq);
    }
    return purged;
  }

  private purgeOps(entry: TrashEntry, seq: number): Op[] {
    const id = entry.portfolioId;
    const tombstone: Tombstone = {
      portfolioId: id,
      revision: entry.revision,
      seq,
      deletedTime: entry.deletedTime,
      purgedTime: Date.now(),
      ...(entry.snapshot.syncApplied && { syncApplied: entry.snapshot.syncApplied }),
    };
    return [
      { type: 'del', col: 'trash', key: id },
      ...this.history
        .of(id)
        .map((revision): Op => ({ type: 'del', col: 'revisions', key: revisionKey(id, revision) })),
      { type: 'put', col: 'tombstones', key: id, value: tombstone },
    ];
  }

  async getPurged(portfolioId: string): Promise<PurgedPortfolio | undefined> {
    const tombstone = this.store.get<Tombstone>('tombstones', portfolioId);
    if (!tombstone) return undefined;
    const { revision, seq, syncApplied = [] } = tombstone;
    return { portfolioId, revision, seq, syncApplied };
  }

  async revisions(
    portfolioId: string,
    pageSize: number,
    cursor: string | null,
  ): Promise<Page<RevisionEntry>> {
    const kept = this.history.of(portfolioId);
    const end = cursor === null ? kept.length : lowerBound(kept, parseCursor(cursor));
    const start = Math.max(0, end - pageSize);
    const items = kept
      .slice(start, end)
      .reverse()
      .map((revision) => this.revisionEntry(portfolioId, revision))
      .filter((entry) => entry !== undefined);
    const next = start > 0 && items.length > 0 ? String(items.at(-1)!.revision) : null;
    return { items, total: kept.length, next };
  }

  async revision(portfolioId: string, revision: number): Promise<RevisionEntry | undefined> {
    return this.revisionEntry(portfolioId, revision);
  }

  async pruneRevisions(policy: RetentionPolicy): Promise<number> {
    const keepNewest = Math.max(1, policy.keepNewest);
    let ops: Op[] = [];
    let removed = 0;
    for (const [id, kept] of this.history.portfolios()) {
      // Candidates end keepNewest before the newest, so the current revision is never one.
      for (const revision of kept.slice(0, Math.max(0, kept.length - keepNewest))) {
        const key = revisionKey(id, revision);
        const entry = this.store.get<StoredRevision>('revisions', key)!;
        if (entry.modifiedTime < policy.keepSince) ops.push({ type: 'del', col: 'revisions', key });
      }
      if (ops.length >= BATCH) {
        removed += ops.length;
        await this.store.commit(ops);
        ops = [];
      }
    }
    if (ops.length > 0) await this.store.commit(ops);
    return removed + ops.length;
  }

  async changesSince(since: number, limit: number): Promise<ChangePage> {
    const { horizon, seq: lastSeq } = this.library();
    // 0 is the full read a resync starts again with: it never needs a forgotten tombstone.
    if (since > 0 && since < horizon) throw new ResyncRequiredError(since, horizon);
    // A cursor past the last change: this directory was restored from an older copy.
    if (since > lastSeq) throw new FeedBehindError(since, lastSeq, horizon);
    const changes: Change[] = [];
    let hasMore = false;
    for (const [seq, change] of this.feed.after(since)) {
      if (seq > this.durableSeq) break; // not acknowledged yet: shown once it is
      if (changes.length === limit) {
        hasMore = true;
        break;
      }
      changes.push(change);
    }
    return { changes, next: changes.at(-1)?.seq ?? since, hasMore };
  }

  async forgetTombstones(purgedBefore: number): Promise<number> {
    const ops: Op[] = [];
    let horizon = this.library().horizon;
    for (const [id, tombstone] of this.store.collection<Tombstone>('tombstones')) {
      if (tombstone.purgedTime >= purgedBefore) continue;
      ops.push({ type: 'del', col: 'tombstones', key: id });
      horizon = Math.max(horizon, tombstone.seq);
    }
    if (ops.length === 0) return 0;
    const library = { ...this.library(), horizon };
    await this.store.commit([
      ...ops,
      { type: 'put', col: 'meta', key: LIBRARY_KEY, value: library },
    ]);
    return ops.length;
  }

  async referencedBlobs(): Promise<Set<string>> {
    return this.blobs.all();
  }

  async isBlobReferenced(sha256: string): Promise<boolean> {
    return this.blobs.has(sha256);
  }

  // ---- internals ----

  private library(): LibraryMeta {
    return this.store.get<LibraryMeta>('meta', LIBRARY_KEY)!;
  }

  private live(portfolioId: string): StoredPortfolio | undefined {
    return this.store.get<StoredPortfolio>('portfolios', portfolioId);
  }

  private trashed(portfolioId: string): TrashEntry | undefined {
    return this.store.get<TrashEntry>('trash', portfolioId);
  }

  /** The live record, if it is still at `expectedRevision` (any revision when undefined). */
  private current(portfolioId: string, expectedRevision: number | undefined): StoredPortfolio {
    const current = this.live(portfolioId);
    if (!current) throw new PortfolioNotFoundError(portfolioId);
    if (expectedRevision !== undefined && current.revision !== expectedRevision)
      throw new RevisionConflictError(portfolioId, current.revision, expectedRevision);
    return current;
  }

  /**
   * The history ops of a change from `previous` to `next`: the superseded revision keeps its
   * record as its snapshot (or goes, with history off) and `next` gets its own entry.
   * `previousStoredAt` says where `previous` is stored, if it is: the journal then refers to it.
   */
  private revisionOps(
    previous: StoredPortfolio | undefined,
    next: StoredPortfolio,
    meta: ChangeMeta,
    previousStoredAt?: { col: 'portfolios'; key: string },
  ): Op[] {
    const ops: Op[] = [];
    if (previous) {
      const key = revisionKey(previous.portfolioId, previous.revision);
      const entry = this.store.get<StoredRevision>('revisions', key);
      if (entry && this.keepHistory) {
        // Where the superseded record is already stored, the journal refers to it: no second copy.
        const embed = previousStoredAt && { field: 'snapshot', ...previousStoredAt };
        const value = { ...entry, snapshot: previous };
        ops.push({ type: 'put', col: 'revisions', key, value, ...(embed && { embed }) });
      } else if (entry) ops.push({ type: 'del', col: 'revisions', key });
    }
    const entry: StoredRevision = {
      portfolioId: next.portfolioId,
      revision: next.revision,
      seq: next.seq,
      modifiedTime: meta.time,
      modifiedBy: meta.by,
      command: meta.command,
      changedFields: meta.changedFields,
    };
    ops.push({
      type: 'put',
      col: 'revisions',
      key: revisionKey(next.portfolioId, next.revision),
      value: entry,
    });
    return ops;
  }

  private revisionEntry(portfolioId: string, revision: number): RevisionEntry | undefined {
    const entry = this.store.get<StoredRevision>('revisions', revisionKey(portfolioId, revision));
    if (!entry) return undefined;
    const snapshot = entry.snapshot ?? this.currentSnapshot(portfolioId, revision);
    return snapshot ? { ...entry, snapshot } : undefined;
  }

  private currentSnapshot(portfolioId: string, revision: number): StoredPortfolio | undefined {
    const live = this.live(portfolioId);
    if (live?.revision === revision) return live;
    const trashed = this.trashed(portfolioId);
    return trashed?.revision === revision ? trashed.snapshot : undefined;
  }

  /** Commits `ops` with the library counter moved to `seq`; see the class invariants. */
  private async commit(ops: Op[], seq: number): Promise<void> {
    const library: LibraryMeta = { ...this.library(), seq };
    await this.store.commit([
      ...ops,
      { type: 'put', col: 'meta', key: LIBRARY_KEY, value: library },
    ]);
    this.durableSeq = Math.max(this.durableSeq, seq);
  }
}

function tombstoneChange(portfolioId: string, entry: { seq: number; revision: number }): Change {
  return { seq: entry.seq, portfolioId, revision: entry.revision, deleted: true };
}

/** The repository stamps seq and authors; the revision is the caller's and must follow on. */
function assertFollows(next: PortfolioRecord, revision: number): void {
  if (next.revision !== revision + 1) {
    throw new RangeError(
      `A change from revision ${revision} must be revision ${revision + 1}, not ${next.revision}`,
    );
  }
}

function parseCursor(cursor: string): number {
  if (!/^[1-9]\d{0,15}$/.test(cursor)) throw new InvalidCursorError(cursor);
  return Number(cursor);
}
