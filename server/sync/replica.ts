import { createHash, randomUUID } from 'node:crypto';
import { unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type {
  Page,
  RevisionEntry,
  StoredPortfolio,
  TrashEntry,
} from '../repositories/portfolio-repository-contract';
import type { BlobStore, Release } from '../storage/blob-store';
import type {
  AppliedRemote,
  EmbeddedPortfolioRepository,
  RemoteEntry,
} from '../storage/embedded/embedded-portfolio-repository';
import type { Op, Store } from '../storage/embedded/store';
import {
  HubClient,
  type FeedChange,
  type FeedPage,
  type Mutation,
  type MutationResult,
} from './hub-client';
import {
  changedFields,
  createFields,
  createHistory,
  filesInHistory,
  filesIn,
  mergeFields,
  onTheWire,
  recordFromFeed,
  type Conflict,
  type SyncRecord,
} from './records';
import type { SecretBox } from './secret-box';
import { connectionCut, HubUploadsFull, localFailure, ResyncNeeded, SyncError } from './sync-error';

/*
 * The replica side of sync (DESIGN §10). Its state lives in the `sync` collection of the same
 * store as the portfolios, so a pulled page, the records it changes and the checkpoint are one
 * commit:
 * - `config`: the hub, the account, the device id, the replica id and the sealed device token.
 * - `checkpoint`: the hub's libraryId and the last seq applied.
 * - `base:<portfolioId>`: the hub revision the local record is based on and that base's
 *   snapshot, plus what a merge left pending.
 *
 * The outbox is derived, not copied: a local record whose seq differs from its base's `localSeq`
 * (or that holds merged-in `pendingFields`) has a pending mutation, whose id is deterministic
 * (`<replicaId>:<portfolioId>:<local seq>:<digest of the change>`), so a push retried after a kill is the same mutation
 * and the hub answers its stored result. Nothing is acknowledged before it is durable.
 */

export interface SyncConfig {
  hubUrl: string;
  username: string;
  deviceId: string;
  replicaId: string;
  sealedToken: string;
}

export interface Checkpoint {
  libraryId: string;
  seq: number;
}

export interface BaseEntry {
  portfolioId: string;
  /** The hub revision the local record is based on (0: not on the hub yet). */
  revision: number;
  /** The hub's record at that revision (null when unknown). */
  snapshot: SyncRecord | null;
  /** The hub has it in the trash (or purged). */
  deleted?: boolean;
  /** The local seq of the record when it last matched the base (or was merged). */
  localSeq: number;
  /** Content the local record had then, if it differs from `snapshot` (after a merge or a push). */
  shown?: SyncRecord;
  /** A local edit merged with later hub changes, still to be sent against `revision`. */
  pendingFields?: Record<string, unknown>;
  /** The mutation id those pending fields were first sent under. */
  pendingId?: string;
  /** The hub refused the local change at this local seq: not sent again until edited again. */
  rejected?: { localSeq: number; code: string; message: string };
  /**
   * Set by a full pull (`restart`): the libraryId this base was taken from. The feed from 0
   * confirms it (same library, a revision the hub still has) or replaces it; one the whole feed
   * did not bring names a portfolio the hub lacks, sent again as a create.
   */
  resync?: string;
  /**
   * The local edit has no common base with the hub's record (the hub is another library, or
   * lost the revision it was based on): it is sent with base revision 0, so the hub, too, shows
   * every value that differs as a conflict instead of taking either side.
   */
  unbased?: boolean;
}

export interface RoundSummary {
  pulled: number;
  pushed: number;
  conflicts: number;
  blobsUp: number;
  blobsDown: number;
  bytesUp: number;
  bytesDown: number;
  durationMs: number;
}

export interface SyncStatus {
  state: 'idle' | 'running' | 'error' | 'offline';
  lastSuccess: number | null;
  lastError: { code: string; message: string; time: number } | null;
  pending: { changes: number; blobs: number; bytes: number };
  progress: { done: number; total: number; bytes: number };
  conflicts: number;
}

export interface ReplicaOptions {
  store: Store;
  portfolios: EmbeddedPortfolioRepository;
  blobs: BlobStore;
  secretBox: SecretBox;
  log: { info(msg: string): void; warn(msg: string): void; error(obj: unknown, msg: string): void };
  /** Records per feed page and mutations per request. */
  pageSize?: number;
  batchSize?: number;
  /** Background rounds: after a local change (debounce) and every `intervalMs`. 0 turns them off. */
  debounceMs?: number;
  intervalMs?: number;
  maxBackoffMs?: number;
}

const CONFIG_KEY = 'config';
const CHECKPOINT_KEY = 'checkpoint';
const baseKey = (portfolioId: string) => `base:${portfolioId}`;
const SYNC_BY = 'sync';
/** Feed changes per page (the hub's maximum): each page is one commit with its checkpoint. */
const PAGE_SIZE = 1000;
/** Blobs downloaded at a time: enough to keep loopback and the disk busy, few enough for a hub. */
const BLOB_DOWNLOADS = 6;

/** A feed page read, and the download of the blobs it needs (pinned until released). */
interface FetchedPage {
  page: FeedPage;
  blobs: Promise<Release[]>;
}

/** Releases the blobs of a page read ahead and not applied, once their downloads ended. */
async function dropPage(fetched: FetchedPage): Promise<void> {
  const releases = await fetched.blobs.catch(() => [] as Release[]);
  for (const release of releases) release();
}

interface Local {
  live?: StoredPortfolio;
  trashed?: TrashEntry;
  /** The local seq of its latest change (live or trash). */
  seq?: number;
}

interface Pending {
  mutation: Mutation;
  localSeq: number;
  /** The local record the mutation was made from (undefined for a delete). */
  record?: SyncRecord;
}

export class Replica {
  private running: Promise<RoundSummary> | null = null;
  private applying = false;
  private lastSuccess: number | null = null;
  private lastError: SyncStatus['lastError'] = null;
  private offline = false;
  private progress = { done: 0, total: 0, bytes: 0 };
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Set by a push the hub answered UNKNOWN_BASE_REVISION: the round reads the hub again. */
  private hubBehind: string | undefined;
  /**
   * The outbox and the counts, kept up to date rather than recounted (see `track`): a round and
   * the status cost what changed since they last looked, not the size of the library.
   * `dirty`: portfolios whose pending mutation may differ from `outbox` (undefined: all of them,
   * until the first look). `outbox`: the pending mutations found, by portfolio id. `refused`:
   * the portfolios whose current local change the hub refused. `conflicts`: the conflicts held.
   */
  private dirty: Set<string> | undefined;
  private readonly outbox = new Map<string, Pending>();
  private readonly refused = new Set<string>();
  /**
   * Portfolios changed here since their base with nothing left to send (deleted and restored,
   * edited and edited back): the local record shows a revision of its own where the hub's is
   * due (see `realign`).
   */
  private readonly stale = new Set<string>();
  private conflicts: number | undefined;
  private pendingTotals: SyncStatus['pending'] | undefined;

  constructor(private readonly options: ReplicaOptions) {
    options.store.onChange(this.track);
    options.store.onChange((col) => {
      if (this.applying || (col !== 'portfolios' && col !== 'trash')) return;
      this.schedule(this.options.debounceMs ?? 2000);
    });
  }

  // ---- configuration ----

  config(): SyncConfig | undefined {
    return this.options.store.get<SyncConfig>('sync', CONFIG_KEY);
  }

  /** Signs in to the hub once and keeps only the device token (sealed). */
  async configure(hubUrl: string, username: string, password: string): Promise<SyncConfig> {
    try {
      return await this.signIn(hubUrl, username, password);
    } catch (cause) {
      const error = cause instanceof SyncError ? cause : (localFailure(cause) ?? cause);
      if (error instanceof SyncError) {
        this.lastError = { code: error.code, message: error.message, time: Date.now() };
        this.offline = error.code === 'HUB_UNREACHABLE';
        this.options.log.warn(`Sync: cannot set up ${hubUrl} (${error.code}): ${error.message}`);
      }
      throw error;
    }
  }

  private async signIn(hubUrl: string, username: string, password: string): Promise<SyncConfig> {
    const client = new HubClient(hubUrl);
    await client.hello();
    const replicaId = randomUUID();
    const device = await client.registerDevice(username, password, deviceName(), replicaId);
    const config: SyncConfig = {
      hubUrl: client.baseUrl,
      username,
      deviceId: device.deviceId,
      replicaId,
      sealedToken: await this.options.secretBox.seal(device.token),
    };
    await this.options.store.commit([{ type: 'put', col: 'sync', key: CONFIG_KEY, value: config }]);
    this.lastError = null;
    this.offline = false;
    this.failures = 0;
    this.options.log.info(`Sync: this library now syncs with ${config.hubUrl} as ${username}`);
    this.schedule(0);
    return config;
  }

  async forget(): Promise<void> {
    await this.options.store.commit([{ type: 'del', col: 'sync', key: CONFIG_KEY }]);
    this.lastError = null;
    this.offline = false;
    clearTimeout(this.timer);
  }

  // ---- status ----

  status(): SyncStatus {
    const state = this.running
      ? 'running'
      : this.offline
        ? 'offline'
        : this.lastError
          ? 'error'
          : 'idle';
    return {
      state,
      lastSuccess: this.lastSuccess,
      lastError: this.lastError,
      pending: this.pendingSummary(),
      progress: { ...this.progress },
      conflicts: this.conflictCount(),
    };
  }

  /** Pending changes, their distinct blobs and those blobs' bytes; recounted only on a change. */
  private pendingSummary(): SyncStatus['pending'] {
    this.refresh();
    if (this.pendingTotals) return { ...this.pendingTotals };
    const pending = [...this.outbox.values()];
    const shas = new Set(pending.flatMap((p) => p.mutation.files));
    const blobs = shas.size;
    let bytes = 0;
    for (const p of pending) {
      for (const file of filesOfRecordFields(p.mutation.fields)) {
        if (shas.delete(file.sha256)) bytes += file.size;
      }
    }
    this.pendingTotals = { changes: pending.length, blobs, bytes };
    return { ...this.pendingTotals };
  }

  /** Conflicts held by local records: counted once, then kept up to date by `track`. */
  private conflictCount(): number {
    if (this.conflicts === undefined) {
      let count = 0;
      for (const record of this.options.store.collection<SyncRecord>('portfolios').values()) {
        count += record.conflicts?.length ?? 0;
      }
      this.conflicts = count;
    }
    return this.conflicts;
  }

  /**
   * Store listener: what a change (local write, applied page, pushed result, rollback) may alter.
   * A portfolio's pending mutation depends only on its live or trashed record, its base and the
   * replica id, so those mark it dirty; a new config (another replica id) marks every one.
   */
  private readonly track = (col: string, key: string, prev: unknown, next: unknown): void => {
    if (col === 'portfolios' || col === 'trash') {
      this.dirty?.add(key);
      if (col === 'portfolios' && this.conflicts !== undefined) {
        this.conflicts +=
          ((next as SyncRecord | undefined)?.conflicts?.length ?? 0) -
          ((prev as SyncRecord | undefined)?.conflicts?.length ?? 0);
      }
    } else if (col === 'sync') {
      if (key.startsWith('base:')) this.dirty?.add(key.slice(5));
      else if (key === CONFIG_KEY) this.dirty = undefined;
    } else return;
    this.pendingTotals = undefined;
  };

  // ---- rounds ----

  /** One round now (or the one running): pull, push, and pull what the push made. */
  run(): Promise<RoundSummary> {
    this.running ??= this.round().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Starts background rounds (every minute, after local changes, backoff while offline). */
  start(): void {
    if ((this.options.intervalMs ?? 60_000) <= 0) return;
    this.schedule(0);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  private schedule(delayMs: number): void {
    if (this.closed || !this.config() || (this.options.intervalMs ?? 60_000) <= 0) return;
    const backoff = this.failures > 0 ? this.backoffMs() : 0;
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () => {
        if (this.closed) return;
        // A change made while a round runs may have missed it: wait for that round, then run.
        const previous = this.running?.catch(() => undefined) ?? Promise.resolve();
        previous
          .then(() => (this.closed ? undefined : this.run()))
          .then(
            () => this.schedule(this.options.intervalMs ?? 60_000),
            // Failed: the next try comes after the backoff (1 s doubling, capped).
            () => this.schedule(0),
          );
      },
      Math.max(delayMs, backoff),
    );
    this.timer.unref();
  }

  private backoffMs(): number {
    const max = this.options.maxBackoffMs ?? 5 * 60_000;
    return Math.min(max, 1000 * 2 ** Math.min(this.failures - 1, 20));
  }

  private async round(): Promise<RoundSummary> {
    const started = Date.now();
    const summary: RoundSummary = {
      pulled: 0,
      pushed: 0,
      conflicts: 0,
      blobsUp: 0,
      blobsDown: 0,
      bytesUp: 0,
      bytesDown: 0,
      durationMs: 0,
    };
    this.progress = { done: 0, total: 0, bytes: 0 };
    this.hubBehind = undefined;
    try {
      const config = this.config();
      if (!config)
        throw new SyncError(
          'SYNC_NOT_CONFIGURED',
          'no team server is set up; sign in to one first',
        );
      const client = new HubClient(
        config.hubUrl,
        await this.options.secretBox.open(config.sealedToken),
      );
      await client.hello();
      await this.pull(client, summary);
      let pushed = await this.push(client, config, summary, true);
      if (this.hubBehind) {
        // The hub lacks the revision a change is based on: it went back in time (restored from an
        // older copy) while keeping its libraryId. Read it whole again, then send what it lacks.
        this.options.log.warn(
          `Sync: the hub does not know the revision this library's changes are based on ` +
            `(${this.hubBehind}); it was probably restored from an older copy: full pull from 0, ` +
            'then the local changes are sent again; nothing is deleted',
        );
        this.hubBehind = undefined;
        const libraryId = this.checkpoint()?.libraryId ?? '';
        await this.restart(libraryId, libraryId);
        await this.pull(client, summary);
        pushed += await this.push(client, config, summary, false);
      }
      if (pushed > 0) await this.pull(client, summary);
      await this.realign();
      summary.durationMs = Date.now() - started;
      this.lastSuccess = Date.now();
      this.failures = 0;
      this.offline = false;
      const rejected = this.rejectedCount();
      this.lastError =
        rejected > 0
          ? {
              code: 'SYNC_REJECTED',
              message: this.rejectedWords(rejected),
              time: Date.now(),
            }
          : null;
      this.options.log.info(
        `Sync round: pulled ${summary.pulled}, pushed ${summary.pushed}, conflicts ${summary.conflicts}, ` +
          `blobs ${summary.blobsDown} down / ${summary.blobsUp} up, ${summary.durationMs} ms`,
      );
      return summary;
    } catch (cause) {
      const error =
        cause instanceof SyncError
          ? cause
          : (localFailure(cause) ??
            connectionCut(cause) ??
            new SyncError('HUB_ERROR', `sync failed: ${(cause as Error).message}`, true));
      this.failures++;
      this.offline = error.code === 'HUB_UNREACHABLE';
      this.lastError = { code: error.code, message: error.message, time: Date.now() };
      this.options.log.warn(`Sync round failed (${error.code}): ${error.message}`);
      throw error;
    }
  }

  // ---- pull ----

  private checkpoint(): Checkpoint | undefined {
    return this.options.store.get<Checkpoint>('sync', CHECKPOINT_KEY);
  }

  private base(portfolioId: string): BaseEntry | undefined {
    return this.options.store.get<BaseEntry>('sync', baseKey(portfolioId));
  }

  private local(portfolioId: string): Local {
    const live = this.options.store.get<StoredPortfolio>('portfolios', portfolioId);
    const trashed = live ? undefined : this.options.store.get<TrashEntry>('trash', portfolioId);
    return { live, trashed, seq: live?.seq ?? trashed?.seq };
  }

  /**
   * Pages in `seq` order, each applied with its checkpoint once its blobs are durable. The next
   * page is read, and its blobs downloaded, while one is applied: the hub builds it and its
   * bytes travel while this process commits.
   */
  private async pull(client: HubClient, summary: RoundSummary): Promise<void> {
    let checkpoint = this.checkpoint();
    let ahead: Promise<FetchedPage> | undefined;
    const read = (since: number) => {
      const fetched = client
        .changes(since, this.options.pageSize ?? PAGE_SIZE)
        .then((page) => ({ page, blobs: this.fetchBlobs(client, page.changes, summary) }));
      fetched.catch(() => {}); // awaited in turn, or dropped (below)
      return fetched;
    };
    try {
      for (;;) {
        let fetched;
        try {
          fetched = await (ahead ?? read(checkpoint?.seq ?? 0));
        } catch (error) {
          if (!(error instanceof ResyncNeeded)) throw error;
          this.options.log.warn(
            `Sync: the hub cannot go on from change ${checkpoint?.seq ?? 0} (${error.message}); ` +
              'full pull from 0, then every local change it lacks is sent again; nothing is deleted',
          );
          checkpoint = await this.restart(checkpoint!.libraryId, checkpoint!.libraryId);
          continue;
        } finally {
          ahead = undefined;
        }
        const { page } = fetched;
        if (checkpoint && checkpoint.libraryId !== page.libraryId) {
          await dropPage(fetched);
          this.options.log.warn(
            `Sync: the hub is another library now (${checkpoint.libraryId} → ${page.libraryId}); ` +
              'full pull, then every local portfolio it lacks is pushed again; nothing is deleted',
          );
          checkpoint = await this.restart(page.libraryId, checkpoint.libraryId);
          continue;
        }
        this.progress.total = Math.max(
          this.progress.total,
          this.progress.done + page.changes.length + (page.hasMore ? 1 : 0),
        );
        const releases = await fetched.blobs;
        // Only now: one page's blobs download at a time (two downloads of one blob would write
        // the same temp file).
        if (page.hasMore) ahead = read(page.next);
        try {
          await this.applyPage(
            page.changes,
            { libraryId: page.libraryId, seq: page.next },
            summary,
          );
        } finally {
          for (const release of releases) release();
        }
        checkpoint = { libraryId: page.libraryId, seq: page.next };
        this.progress.done += page.changes.length;
        if (!page.hasMore) return;
      }
    } finally {
      // A round that fails leaves no download running behind it (the next would share its files).
      if (ahead) await ahead.then(dropPage, () => {});
    }
  }

  /**
   * A full pull from 0: the checkpoint restarts and every base is marked with the library it
   * came from (`resync`), never forgotten, so a pending local edit is still told from an
   * unchanged record. The feed then confirms each base or replaces it (see `applyPage`); the
   * records it does not bring are creates again. Nothing is deleted for being absent.
   */
  private async restart(libraryId: string, previousLibraryId: string): Promise<Checkpoint> {
    const checkpoint = { libraryId, seq: 0 };
    const ops: Op[] = [{ type: 'put', col: 'sync', key: CHECKPOINT_KEY, value: checkpoint }];
    for (const [key, base] of this.options.store.collection<BaseEntry>('sync')) {
      if (!key.startsWith('base:') || base.resync !== undefined) continue;
      ops.push({ type: 'put', col: 'sync', key, value: { ...base, resync: previousLibraryId } });
    }
    await this.options.store.commit(ops);
    return checkpoint;
  }

  /**
   * Portfolios of the page whose base (kept by a full pull of the same library) is newer than
   * the hub's record: the hub lost revisions. Those whose hub record is exactly a revision this
   * library holds in its history are ancestors of the local record, so the local differences
   * are changes to send again; the others have no common base.
   */
  private async hubAncestors(changes: FeedChange[], libraryId: string): Promise<Set<string>> {
    const ancestors = new Set<string>();
    for (const change of changes) {
      const base = this.base(change.portfolioId);
      if (change.deleted || base?.resync !== libraryId || base.revision <= change.revision)
        continue;
      const kept = await this.options.portfolios.revision(change.portfolioId, change.revision);
      const hub = recordFromFeed(change.portfolio!);
      if (kept && Object.keys(changedFields(kept.snapshot, hub)).length === 0)
        ancestors.add(change.portfolioId);
    }
    return ancestors;
  }

  /**
   * Downloads the blobs of the page's records that this library lacks, `BLOB_DOWNLOADS` at a
   * time; each is hashed as it arrives and fsync'd before it moves into the blob store, so all
   * are durable before the page's records (and checkpoint) commit. A download's slot goes to the
   * next one as soon as its bytes are written: its fsync runs meanwhile. Pinned until released.
   */
  private async fetchBlobs(
    client: HubClient,
    changes: FeedChange[],
    summary: RoundSummary,
  ): Promise<Release[]> {
    const wanted = new Set<string>();
    for (const change of changes) {
      if (change.deleted || !change.portfolio) continue;
      // The feed item lists the hash of each of its files: no need to build the record here.
      const hashes = (change.portfolio.fileHashes ?? {}) as Record<string, string>;
      for (const sha of Object.values(hashes)) wanted.add(sha);
    }
    const queue = [...wanted];
    const adopted: Promise<Release>[] = [];
    let failed = false;
    const worker = async () => {
      while (!failed && queue.length > 0) {
        const sha = queue.shift()!;
        const download = this.fetchBlob(client, sha, summary);
        const finished = download.then(({ adopted }) => adopted);
        finished.catch(() => {}); // seen below, once every download has ended
        adopted.push(finished);
        await download.catch(() => (failed = true));
      }
    };
    await Promise.all(Array.from({ length: Math.min(BLOB_DOWNLOADS, queue.length) }, worker));
    const settled = await Promise.allSettled(adopted);
    const releases = settled.flatMap((one) => (one.status === 'fulfilled' ? [one.value] : []));
    const failure = settled.find((one) => one.status === 'rejected');
    if (failure) {
      for (const release of releases) release();
      throw failure.reason;
    }
    return releases;
  }

  /**
   * One blob of `fetchBlobs`: held if stored already, else downloaded and verified. Answers once
   * its bytes are written, with what finishes it: once the file is fsync'd, adopting renames it
   * into place and fsyncs the directory.
   */
  private async fetchBlob(
    client: HubClient,
    sha: string,
    summary: RoundSummary,
  ): Promise<{ adopted: Promise<Release> }> {
    const blobs = this.options.blobs;
    if ((await blobs.sizeOf(sha)) !== undefined)
      return { adopted: Promise.resolve(blobs.hold([sha])) };
    // A stable name per blob: a download cut by a kill resumes from what it holds.
    const temp = join(blobs.tempDir, `${sha}.pull`);
    const got = await client.getBlob(sha, temp, (n) => {
      this.progress.bytes += n;
    });
    if (got.sha256 !== sha) {
      await got.durable.catch(() => undefined);
      await unlink(temp).catch(() => undefined);
      throw new SyncError('HUB_ERROR', `the hub sent bytes that do not match blob ${sha}`, true);
    }
    summary.blobsDown++;
    summary.bytesDown += got.bytes;
    return { adopted: got.durable.then(() => blobs.adopt(temp, sha, Promise.resolve())) };
  }

  /** Decides every change of the page against local state and commits it with the checkpoint. */
  private async applyPage(
    changes: FeedChange[],
    checkpoint: Checkpoint,
    summary: RoundSummary,
  ): Promise<void> {
    // Old revisions do not change: read before the decisions.
    const ancestors = await this.hubAncestors(changes, checkpoint.libraryId);
    // Decided and committed in one tick: no local write can slip in between.
    const entries: RemoteEntry[] = [];
    const bases: ((applied: Map<string, AppliedRemote>) => BaseEntry | null)[] = [];
    const config = this.config();
    for (const change of changes) {
      const id = change.portfolioId;
      const local = this.local(id);
      const meta = {
        by: SYNC_BY,
        time: Date.now(),
        command: 'sync',
        changedFields: [] as string[],
      };
      summary.pulled++;
      let base = this.base(id);
      if (base?.resync !== undefined) {
        const { resync, ...kept } = base;
        if (resync === checkpoint.libraryId && kept.revision <= change.revision) {
          // The same library still has the revision: the base holds, as in any pull.
          base = kept;
          bases.push(() => kept);
        } else if (resync === checkpoint.libraryId && ancestors.has(id)) {
          // The hub lost the revisions after its record: the local record builds on it.
          base = undefined;
        } else {
          const lost = resync === checkpoint.libraryId;
          const decided = this.unbased(change, kept, local, lost, meta, config, summary);
          if (decided.entry) entries.push(decided.entry);
          bases.push(decided.base);
          continue;
        }
      }
      const pending = this.pendingOf(id, base, local, config?.replicaId ?? '');
      if (change.deleted) {
        if (pending && local.live) {
          // Edit against delete: the edit wins (on the hub too, once pushed) — keep it. The base
          // stays the revision the edit started from: the tombstone's revision is the hub's last
          // live one, whose content this library never saw, and the hub merges against the base
          // named (a later hub edit of the same field is a conflict, as without the delete).
          if (base) bases.push(() => ({ ...base, deleted: true }));
          continue;
        }
        if (local.live) entries.push({ portfolioId: id, record: null, meta });
        bases.push((applied) => ({
          portfolioId: id,
          revision: change.revision,
          snapshot: base?.snapshot ?? local.live ?? local.trashed?.snapshot ?? null,
          deleted: true,
          localSeq: applied.get(id)?.seq ?? local.seq ?? 0,
        }));
        continue;
      }
      const hub = recordFromFeed(change.portfolio!);
      if (!pending || (local.trashed && !pending.record)) {
        if (pending) continue; // a local delete waits for the push; the hub answers with a conflict
        entries.push({
          portfolioId: id,
          record: hub,
          meta: { ...meta, changedFields: Object.keys(changedFields(local.live, hub)) },
        });
        bases.push((applied) => ({
          portfolioId: id,
          revision: hub.revision,
          snapshot: hub,
          localSeq: applied.get(id)!.seq!,
        }));
        continue;
      }
      // Pending local edit: three-way merge against its base; the hub decides the same way.
      const mine = pending.mutation.fields;
      const reference = base?.snapshot ?? (base ? null : hub);
      const { merged, conflicts } = mergeFields(
        reference as Record<string, unknown> | null,
        pending.mutation.op === 'create' && !base ? changedFields(hub, pending.record!) : mine,
        hub as unknown as Record<string, unknown>,
      );
      const fieldNames = Object.keys(conflicts);
      const record = { ...(merged as SyncRecord) };
      if (fieldNames.length > 0) {
        summary.conflicts += fieldNames.length;
        const since = base?.revision ?? hub.revision;
        const conflict = localConflict(
          id,
          config,
          pending.mutation.mutationId,
          since,
          conflicts,
          `Changed here and on the hub since revision ${since}: ` +
            `the hub's value is kept, this library's is shown as theirs (${fieldNames.join(', ')}).`,
        );
        record.conflicts = [...(hub.conflicts ?? []), conflict];
      }
      // A hub conflict resolved here stays resolved while the resolve waits for the push.
      const resolving = new Set(pending.mutation.resolveConflicts ?? []);
      if (resolving.size > 0 && record.conflicts) {
        record.conflicts = record.conflicts.filter((c) => !resolving.has(c.conflictId));
        if (record.conflicts.length === 0) delete record.conflicts;
      }
      entries.push({
        portfolioId: id,
        record,
        meta: {
          ...meta,
          command: 'sync-merge',
          changedFields: Object.keys(changedFields(local.live, record)),
        },
      });
      const pendingFields = base ? mine : changedFields(hub, pending.record!);
      bases.push((applied) => ({
        portfolioId: id,
        revision: base ? base.revision : hub.revision,
        snapshot: base ? base.snapshot : hub,
        deleted: base?.deleted,
        localSeq: applied.get(id)!.seq!,
        shown: record,
        pendingFields,
        pendingId: pending.mutation.mutationId,
      }));
    }
    const extra = (applied: AppliedRemote[]): Op[] => {
      const byId = new Map(applied.map((entry) => [entry.portfolioId, entry]));
      const ops: Op[] = [];
      for (const make of bases) {
        const base = make(byId);
        if (base)
          ops.push({ type: 'put', col: 'sync', key: baseKey(base.portfolioId), value: base });
      }
      ops.push({ type: 'put', col: 'sync', key: CHECKPOINT_KEY, value: checkpoint });
      return ops;
    };
    this.applying = true;
    let done: Promise<unknown>;
    try {
      done = this.options.portfolios.applyRemote(entries, extra);
    } finally {
      this.applying = false;
    }
    await done;
  }

  /**
   * Once synced, a replica shows the hub's revision (DESIGN §10). A local change that changed
   * nothing the hub would take (a delete and a restore between two rounds, an edit undone)
   * sends no mutation, and the hub sends nothing back: the hub's record at the base takes the
   * local one's place, as a pull would. Decided and committed in one tick, like a page.
   */
  private async realign(): Promise<void> {
    this.refresh();
    if (this.stale.size === 0) return;
    const entries: RemoteEntry[] = [];
    const bases = new Map<string, BaseEntry>();
    for (const id of this.stale) {
      const base = this.base(id);
      const local = this.local(id);
      if (!base?.snapshot || !isStale(base, local)) continue;
      entries.push({
        portfolioId: id,
        record: base.snapshot,
        meta: {
          by: SYNC_BY,
          time: Date.now(),
          command: 'sync',
          changedFields: Object.keys(changedFields(local.live, base.snapshot)),
        },
      });
      bases.set(id, base);
    }
    if (entries.length === 0) return;
    this.applying = true;
    let done: Promise<unknown>;
    try {
      done = this.options.portfolios.applyRemote(entries, (applied) =>
        applied.flatMap(({ portfolioId, seq }) => {
          const base = bases.get(portfolioId);
          if (!base || seq === undefined) return [];
          const value: BaseEntry = { ...base, localSeq: seq };
          return [{ type: 'put' as const, col: 'sync', key: baseKey(portfolioId), value }];
        }),
      );
    } finally {
      this.applying = false;
    }
    await done;
  }

  /**
   * A change whose portfolio has a base that means nothing to the hub's record: the hub is
   * another library, or (`lost`) it lost the revision the base is and holds none this library
   * knows. With no local edit since the base, the hub's record is taken (history keeps the local
   * one). With one, nothing is taken silently: every value that differs is a conflict (the
   * hub's value shown, this library's as theirs), and the edit is sent with no base, so the hub
   * records the same conflict. A local delete is sent with no base too: on the hub it is a
   * delete conflict for a person to decide. The local record of a lost revision counts as an
   * edit: it holds what the hub lost.
   */
  private unbased(
    change: FeedChange,
    base: BaseEntry,
    local: Local,
    lost: boolean,
    meta: RemoteEntry['meta'],
    config: SyncConfig | undefined,
    summary: RoundSummary,
  ): { entry?: RemoteEntry; base: (applied: Map<string, AppliedRemote>) => BaseEntry | null } {
    const id = change.portfolioId;
    const edited =
      lost ||
      local.seq !== base.localSeq ||
      base.pendingFields !== undefined ||
      base.revision === 0 ||
      base.unbased === true;
    if (change.deleted) {
      if (edited && local.live) {
        // Deleted there, edited here: the edit wins, as against any delete (sent whole).
        return {
          base: () => ({
            portfolioId: id,
            revision: change.revision,
            snapshot: null,
            deleted: true,
            localSeq: -1,
          }),
        };
      }
      return {
        ...(local.live && { entry: { portfolioId: id, record: null, meta } }),
        base: (applied) => ({
          portfolioId: id,
          revision: change.revision,
          snapshot: null,
          deleted: true,
          localSeq: applied.get(id)?.seq ?? local.seq ?? 0,
        }),
      };
    }
    const hub = recordFromFeed(change.portfolio!);
    if (local.trashed && edited) {
      // Deleted here: kept in the trash and sent as a delete with no base.
      return {
        base: () => ({
          portfolioId: id,
          revision: hub.revision,
          snapshot: hub,
          localSeq: -1,
          unbased: true,
        }),
      };
    }
    const mine = local.live && edited ? changedFields(hub, local.live) : {};
    if (Object.keys(mine).length === 0) {
      return {
        entry: {
          portfolioId: id,
          record: hub,
          meta: { ...meta, changedFields: Object.keys(changedFields(local.live, hub)) },
        },
        base: (applied) => ({
          portfolioId: id,
          revision: hub.revision,
          snapshot: hub,
          localSeq: applied.get(id)!.seq!,
        }),
      };
    }
    const { conflicts } = mergeFields(null, mine, hub as unknown as Record<string, unknown>);
    const fieldNames = Object.keys(conflicts);
    summary.conflicts += fieldNames.length;
    const why = lost
      ? 'the hub lost the revision this library built on'
      : 'the hub is another library now';
    const conflict = localConflict(
      id,
      config,
      '',
      0,
      conflicts,
      `This library's record and the hub's share no revision (${why}): the hub's values ` +
        `are kept, this library's are shown as theirs (${fieldNames.join(', ')}).`,
    );
    const record: SyncRecord = { ...hub, conflicts: [...(hub.conflicts ?? []), conflict] };
    return {
      entry: {
        portfolioId: id,
        record,
        meta: {
          ...meta,
          command: 'sync-merge',
          changedFields: Object.keys(changedFields(local.live, record)),
        },
      },
      base: (applied) => ({
        portfolioId: id,
        revision: hub.revision,
        snapshot: hub,
        localSeq: applied.get(id)!.seq!,
        shown: record,
        pendingFields: mine,
        unbased: true,
      }),
    };
  }

  // ---- push ----

  /**
   * The mutation a portfolio has pending, if any (see the class comment). Its id also carries a
   * digest of what it changes: two copies of one data directory share the replica id and the
   * local seqs, and the hub must not take one copy's change for the other's, already applied.
   */
  private pendingOf(
    id: string,
    base: BaseEntry | undefined,
    local: Local,
    replicaId: string,
  ): Pending | undefined {
    const pending = this.pendingDraft(id, base, local, replicaId);
    if (!pending || pending.mutation.mutationId) return pending;
    const { op, baseRevision, fields, resolveConflicts } = pending.mutation;
    const digest = createHash('sha256')
      .update(JSON.stringify({ op, baseRevision, fields, resolveConflicts }))
      .digest('hex')
      .slice(0, 16);
    pending.mutation.mutationId =
      base?.pendingId && base.localSeq === pending.localSeq
        ? base.pendingId
        : `${replicaId}:${id}:${pending.localSeq}:${digest}`;
    return pending;
  }

  /** The pending mutation without its id (but for a purge's, which says everything). */
  private pendingDraft(
    id: string,
    base: BaseEntry | undefined,
    local: Local,
    replicaId: string,
  ): Pending | undefined {
    if (!base || base.resync !== undefined) {
      // Not on the hub (or not seen in its full feed): a create of what is here.
      if (!local.live) return undefined;
      if (base?.rejected?.localSeq === local.live.seq) return undefined;
      const record = local.live as SyncRecord;
      const fields = createFields(record);
      return {
        localSeq: local.live.seq,
        record,
        mutation: {
          mutationId: '',
          portfolioId: id,
          baseRevision: 0,
          op: 'create',
          fields,
          files: filesIn(fields),
        },
      };
    }
    const seq = local.seq;
    if (seq === undefined) {
      // Purged here: the hub is told it was deleted, unless it knows already.
      if (base.deleted || base.revision === 0) return undefined;
      return {
        localSeq: -1,
        mutation: {
          mutationId: `${replicaId}:${id}:purged`,
          portfolioId: id,
          baseRevision: base.revision,
          op: 'delete',
          fields: {},
          files: [],
        },
      };
    }
    if (seq === base.localSeq && !base.pendingFields) return undefined;
    if (base.rejected?.localSeq === seq) return undefined;
    // No common base: the hub merges without one, so every difference is a conflict there.
    const baseRevision = base.unbased ? 0 : base.revision;
    if (local.trashed) {
      if (base.deleted) return undefined;
      if (base.revision === 0) return undefined;
      return {
        localSeq: seq,
        mutation: {
          mutationId: '',
          portfolioId: id,
          baseRevision,
          op: 'delete',
          fields: {},
          files: [],
        },
      };
    }
    const record = local.live as SyncRecord;
    if (base.revision === 0) {
      const fields = createFields(record);
      return {
        localSeq: seq,
        record,
        mutation: {
          mutationId: '',
          portfolioId: id,
          baseRevision: 0,
          op: 'create',
          fields,
          files: filesIn(fields),
        },
      };
    }
    const fields = { ...base.pendingFields, ...changedFields(base.shown ?? base.snapshot, record) };
    const resolved = resolvedHere(base, record);
    const op = base.deleted && Object.keys(fields).length === 0 ? 'restore' : 'update';
    if (op === 'update' && Object.keys(fields).length === 0 && resolved.length === 0)
      return undefined;
    return {
      localSeq: seq,
      record,
      mutation: {
        mutationId: '',
        portfolioId: id,
        baseRevision,
        op,
        fields,
        files: filesIn(fields),
        ...(resolved.length > 0 && { resolveConflicts: resolved }),
      },
    };
  }

  /**
   * The outbox: every pending mutation. Derived again only for the portfolios changed since the
   * last call (all of them the first time), so a round with few changes costs little in a large
   * library.
   */
  private pendingMutations(): Pending[] {
    this.refresh();
    return [...this.outbox.values()];
  }

  /** Derives the pending mutation (and refusal) of every dirty portfolio again. */
  private refresh(): void {
    const store = this.options.store;
    if (!this.dirty) {
      this.outbox.clear();
      this.refused.clear();
      this.stale.clear();
      const ids = new Set<string>();
      for (const id of store.collection('portfolios').keys()) ids.add(id);
      for (const id of store.collection('trash').keys()) ids.add(id);
      for (const key of store.collection('sync').keys())
        if (key.startsWith('base:')) ids.add(key.slice(5));
      this.dirty = ids;
    }
    if (this.dirty.size === 0) return;
    const replicaId = this.config()?.replicaId ?? '';
    for (const id of this.dirty) {
      const base = this.base(id);
      const local = this.local(id);
      const found = this.pendingOf(id, base, local, replicaId);
      if (found) this.outbox.set(id, found);
      else this.outbox.delete(id);
      if (!found && isStale(base, local)) this.stale.add(id);
      else this.stale.delete(id);
      if (base?.rejected && local.seq === base.rejected.localSeq) this.refused.add(id);
      else this.refused.delete(id);
    }
    this.dirty.clear();
  }

  private async push(
    client: HubClient,
    config: SyncConfig,
    summary: RoundSummary,
    /** An unknown base revision starts a full pull (once a round) instead of a refusal. */
    resyncOnUnknownBase: boolean,
  ): Promise<number> {
    const pending = this.pendingMutations();
    if (pending.length === 0) return 0;
    await this.withHistory(pending);
    this.progress.total += pending.length;
    const shas = [...new Set(pending.flatMap((p) => p.mutation.files))];
    const missing = new Set(shas.length > 0 ? await client.missingBlobs(shas) : []);
    let pushed = 0;
    const batch = this.options.batchSize ?? 100;
    for (let start = 0; start < pending.length;) {
      // Blobs first: the hub refuses a mutation whose files it lacks.
      const slice = await this.uploadFor(
        client,
        pending.slice(start, start + batch),
        missing,
        summary,
      );
      start += slice.length;
      const results = await client.mutations(
        config.replicaId,
        slice.map((p) => onTheWire(p.mutation)),
      );
      await this.recordResults(slice, results, summary, resyncOnUnknownBase);
      pushed += slice.length;
      this.progress.done += slice.length;
    }
    summary.pushed += pushed;
    return pushed;
  }

  /**
   * Each create brings the portfolio's kept history along (DESIGN §10, §11), and the blobs its
   * older revisions name: joining a hub never cuts a library's history.
   */
  private async withHistory(pending: Pending[]): Promise<void> {
    for (const { mutation, record } of pending) {
      if (mutation.op !== 'create' || !record || mutation.history !== undefined) continue;
      const kept: RevisionEntry[] = [];
      let cursor: string | null = null;
      do {
        const page: Page<RevisionEntry> = await this.options.portfolios.revisions(
          mutation.portfolioId,
          500,
          cursor,
        );
        kept.push(...page.items);
        cursor = page.next;
      } while (cursor !== null);
      const history = createHistory(record, kept);
      mutation.history = history;
      mutation.files = [...new Set([...mutation.files, ...filesInHistory(history)])];
    }
  }

  /**
   * Uploads the blobs the hub lacks of `candidates`, in order, and answers those whose blobs are
   * all up. The hub keeps uploads no change uses yet within a quota: when it is full, the ones
   * answered so far are pushed first (then their blobs count no more) and the rest go on after.
   * One change whose files alone do not fit fails the round with the hub's words.
   */
  private async uploadFor(
    client: HubClient,
    candidates: Pending[],
    missing: Set<string>,
    summary: RoundSummary,
  ): Promise<Pending[]> {
    const ready: Pending[] = [];
    for (const pending of candidates) {
      try {
        for (const sha of pending.mutation.files) {
          if (!missing.has(sha)) continue;
          const sent = await client.putBlob(sha, this.options.blobs.pathOf(sha), (n) => {
            this.progress.bytes += n;
          });
          missing.delete(sha);
          summary.blobsUp++;
          summary.bytesUp += sent;
        }
      } catch (error) {
        if (error instanceof HubUploadsFull && ready.length > 0) return ready;
        throw error;
      }
      ready.push(pending);
    }
    return ready;
  }

  /** Stores what the hub said about each mutation, in one commit. */
  private async recordResults(
    sent: Pending[],
    results: MutationResult[],
    summary: RoundSummary,
    resyncOnUnknownBase: boolean,
  ): Promise<void> {
    const byId = new Map(results.map((result) => [result.mutationId, result]));
    const ops: Op[] = [];
    const checkpoint = this.checkpoint();
    /** The oldest hub change a result names that the feed has already passed (see below). */
    let passed: number | undefined;
    for (const { mutation, localSeq, record } of sent) {
      const result = byId.get(mutation.mutationId);
      if (!result) continue;
      const base = this.base(mutation.portfolioId);
      if (result.status === 'rejected') {
        if (result.error?.code === 'BLOBS_MISSING') continue; // uploaded next round, then retried
        if (result.error?.code === 'UNKNOWN_BASE_REVISION' && resyncOnUnknownBase) {
          this.hubBehind ??= `portfolio ${mutation.portfolioId}: ${result.error.message}`;
          continue; // sent again after the full pull
        }
        const rejected = {
          localSeq,
          code: result.error?.code ?? 'REJECTED',
          message: result.error?.message ?? 'the hub refused this change',
        };
        this.options.log.warn(
          `Sync: the hub refused the change of portfolio ${mutation.portfolioId} (${rejected.code}): ${rejected.message}`,
        );
        const value: BaseEntry = base
          ? { ...base, rejected }
          : {
              portfolioId: mutation.portfolioId,
              revision: 0,
              snapshot: null,
              localSeq: -1,
              rejected,
            };
        ops.push({ type: 'put', col: 'sync', key: baseKey(mutation.portfolioId), value });
        continue;
      }
      if (result.status === 'conflict') summary.conflicts++;
      const value: BaseEntry = {
        portfolioId: mutation.portfolioId,
        revision: result.revision ?? base?.revision ?? 0,
        // Until the pull brings the hub's record, the content sent stands in for it.
        snapshot: record ?? base?.snapshot ?? null,
        // A delete the hub refused for an edit it was not based on leaves the record live there.
        deleted: mutation.op === 'delete' && result.status !== 'conflict',
        localSeq,
      };
      ops.push({ type: 'put', col: 'sync', key: baseKey(mutation.portfolioId), value });
      // The hub made this result before the feed position already applied here: an answer
      // lost earlier (a cut connection, a hub killed before it answered), the mutation applied
      // then and answered again now. Its record went by in a pull while this library still held
      // the change pending, so it was merged or skipped, never taken: the next pull reads the
      // feed again from that change, so this library shows the hub's result (a refused delete
      // comes back live with its conflict, a provisional conflict gives way to the hub's).
      if (checkpoint && result.seq !== undefined && result.seq > 0 && result.seq <= checkpoint.seq)
        passed = Math.min(passed ?? Infinity, result.seq);
    }
    if (checkpoint && passed !== undefined) {
      ops.push({
        type: 'put',
        col: 'sync',
        key: CHECKPOINT_KEY,
        value: { libraryId: checkpoint.libraryId, seq: passed - 1 },
      });
    }
    if (ops.length > 0) await this.options.store.commit(ops);
  }

  /** Local changes the hub refused and that were not edited since. */
  private rejectedCount(): number {
    this.refresh();
    return this.refused.size;
  }

  private rejectedWords(count: number): string {
    this.refresh();
    const [first] = this.refused;
    const rejected = first === undefined ? undefined : this.base(first)?.rejected;
    if (!rejected) return '';
    return `the hub refused ${count} change${count === 1 ? '' : 's'}; they are kept here and sent again once edited. First: portfolio ${first}: ${rejected.message} (${rejected.code})`;
  }
}

/**
 * A live local record changed since its hub base, with nothing to send (no pending mutation was
 * found for it): it differs from the hub's record at the base only in its own revision stamps.
 */
function isStale(base: BaseEntry | undefined, local: Local): boolean {
  return (
    base !== undefined &&
    local.live !== undefined &&
    base.snapshot !== null &&
    base.snapshot.revision === base.revision &&
    base.revision > 0 &&
    base.resync === undefined &&
    !base.deleted &&
    !base.unbased &&
    base.pendingFields === undefined &&
    base.shown === undefined &&
    base.rejected === undefined &&
    local.seq !== base.localSeq
  );
}

function filesOfRecordFields(fields: Record<string, unknown>): { sha256: string; size: number }[] {
  const files: { sha256: string; size: number }[] = [];
  const cover = fields.cover as { sha256: string; size: number } | null | undefined;
  if (cover) files.push(cover);
  for (const slot of ['draftingProcess', 'additionalDocument']) {
    for (const file of (fields[slot] as { sha256: string; size: number }[] | undefined) ?? [])
      files.push(file);
  }
  return files;
}

/** Hub conflicts the base holds that the local record no longer does: resolved here. */
function resolvedHere(base: BaseEntry, record: SyncRecord): string[] {
  const here = new Set((record.conflicts ?? []).map((conflict) => conflict.conflictId));
  return (base.snapshot?.conflicts ?? [])
    .map((conflict) => conflict.conflictId)
    .filter((id) => !here.has(id) && !id.startsWith('local-'));
}

/** A conflict this library found while merging a pulled record (the hub will find the same). */
function localConflict(
  portfolioId: string,
  config: SyncConfig | undefined,
  mutationId: string,
  baseRevision: number,
  fields: Conflict['fields'],
  note: string,
): Conflict {
  return {
    conflictId: `local-${randomUUID()}`,
    portfolioId,
    kind: 'field',
    createdTime: Date.now(),
    by: config?.username ?? '',
    replicaId: config?.replicaId ?? '',
    mutationId,
    baseRevision,
    fields,
    note,
  };
}

function deviceName(): string {
  return `Portfolio Manager on ${hostname()}`.slice(0, 100);
}
