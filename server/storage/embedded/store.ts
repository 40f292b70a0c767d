import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Low } from 'lowdb';
import { StorageWriteFailedError } from '../../repositories/storage-backend';
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock';
import { Journal, replayedValue, serializeEntry, type Op } from './journal';
import { migrate, SCHEMA_VERSION } from './migrations';
import {
  SnapshotFile,
  StorageCorruptError,
  type DeferredSection,
  type ReadSnapshot,
  type SnapshotData,
  type SnapshotState,
} from './snapshot-file';

/** Sets `key` to `value` in `map`, or deletes it when `value` is undefined (a deletion). */
function setOrDelete(map: Map<string, unknown>, key: string, value: unknown): void {
  if (value === undefined) map.delete(key);
  else map.set(key, value);
}

export const COLLECTIONS = [
  'meta',
  'users',
  'sessions',
  'portfolios',
  'trash',
  'revisions',
  'tombstones',
  /** A replica's sync state (server/sync/): hub config, checkpoint, per-portfolio bases. */
  'sync',
  /** Share links of portfolios (DESIGN §15). */
  'shares',
] as const;
export type CollectionName = (typeof COLLECTIONS)[number];
export type { Op } from './journal';

export class StorageWriteError extends StorageWriteFailedError {
  override readonly name = 'StorageWriteError';
}

export type ChangeListener = (
  col: CollectionName,
  key: string,
  prev: unknown,
  next: unknown,
) => void;

/** Read access to collections: the live store, or a view of it at one point (`durableView`). */
export interface StoreView {
  get<T>(col: CollectionName, key: string): T | undefined;
  collection<T>(name: CollectionName): ReadonlyMap<string, T>;
}

export interface StoreOptions {
  dataDir: string;
  /** Journal bytes written since the last snapshot before a new one is made (at least). */
  compactMinBytes?: number;
  /** Previous snapshot generations kept beside the current one. */
  generations?: number;
  log?: {
    info(msg: string): void;
    warn(msg: string): void;
    error(obj: unknown, msg: string): void;
  };
}

interface Batch {
  seq: number;
  line: string;
  undo: UndoEntry[];
  resolve: () => void;
  reject: (error: Error) => void;
}

interface UndoEntry {
  col: CollectionName;
  key: string;
  prev: unknown;
}

const emptySnapshotDocument = (): SnapshotData => ({
  version: SCHEMA_VERSION,
  journalSeq: 0,
  collections: {},
});

/**
 * A collection the snapshot left unparsed (snapshot-file.ts): its section, and the journal's
 * changes to it since that snapshot, applied in order once it is parsed.
 */
interface Deferred {
  section: DeferredSection;
  replayed: [key: string, value: unknown][];
}

/** What lowdb holds between snapshots: nothing of the records, which live in the maps. */
const emptySnapshot = (journalSeq: number): SnapshotState => ({
  version: SCHEMA_VERSION,
  journalSeq,
  collections: {},
});

/**
 * Groups written at a time. In the 95/5 mix at 100k (~110 updates/s, a write taking a turn of the
 * event loop, 6–8 ms) about 0.8 writes are in flight on average: with two at most, a fifth of the
 * commits would still wait for a slot (Poisson), with three one in twenty. Beyond them commits
 * share a write, so a burst does not become as many syncs; and of libuv's four threads one is
 * left for the other file work.
 */
export const MAX_WRITES_IN_FLIGHT = 3;
const DEFAULT_COMPACT_MIN_BYTES = 8 * 1024 * 1024;
const silentLog = { info() {}, warn() {}, error() {} };

/**
 * The database: every collection lives in memory as Maps of immutable records; durability comes
 * from a write-ahead journal plus a lowdb snapshot that is rewritten in the background once the
 * journal has grown. A commit's cost is one appended line, independent of how much is stored;
 * commits made while earlier ones are being written share one durable write (group commit), and
 * up to `MAX_WRITES_IN_FLIGHT` such writes overlap.
 *
 * Invariants:
 * - Records are never mutated after `commit`; a change stores a new object. That lets a snapshot
 *   capture state by reference while later commits go on.
 * - A commit is applied to memory at once (so the next request sees it) and resolves only once
 *   its journal line, and every line before it, is durable. If a write fails, every commit not
 *   yet durable is rolled back in reverse order and rejected, and the journal is cut back to
 *   before them: memory again equals what is on disk.
 */
export class Store implements StoreView {
  private readonly maps = new Map<CollectionName, Map<string, unknown>>(
    COLLECTIONS.map((name) => [name, new Map<string, unknown>()]),
  );
  /** Collections still in their snapshot section; `map` parses one on first use. */
  private readonly deferred = new Map<CollectionName, Deferred>();
  private readonly listeners: ChangeListener[] = [];
  /** Commits applied in memory whose group is not being written yet. */
  private queue: Batch[] = [];
  /** Groups being written, in the order they were started (and are acknowledged). */
  private inFlight: { group: Batch[]; outcome: Promise<number | Error> }[] = [];
  /** No write starts: a segment switch or a failed write's cut waits for those in flight. */
  private holding = false;
  private flushing: Promise<void> | null = null;
  private compaction: Promise<void> | null = null;
  private seq = 0;
  private durableSeq = 0;
  private journalBytes = 0;
  private lastSnapshotBytesEstimate = 0;
  private closed = false;
  private compactRequested = false;
  /**
   * How long each step of opening took (ms): read, parse, replay, maps, and what later openers
   * (the repositories' own indexes) add with `timeOpening`. Logged at debug level on listen.
   */
  readonly openTimings: Record<string, number> = {};

  private constructor(
    private readonly options: Required<Omit<StoreOptions, 'log'>> & {
      log: NonNullable<StoreOptions['log']>;
    },
    private readonly lock: DataDirLock,
    private readonly journal: Journal,
    private readonly snapshot: Low<SnapshotState>,
    private readonly snapshotFile: SnapshotFile,
  ) {}

  static async open(options: StoreOptions): Promise<Store> {
    const settings = {
      dataDir: options.dataDir,
      compactMinBytes: options.compactMinBytes ?? DEFAULT_COMPACT_MIN_BYTES,
      generations: options.generations ?? 2,
      log: options.log ?? silentLog,
    };
    await mkdir(settings.dataDir, { recursive: true });
    const lock = await acquireDataDirLock(settings.dataDir);
    try {
      const file = new SnapshotFile(join(settings.dataDir, 'db.json'), {
        generations: settings.generations,
        onRecovered: ({ setAside, loaded }) =>
          settings.log.warn(
            `Database file ${setAside} was unreadable and set aside; recovered from ${loaded}`,
          ),
      });
      const low = new Low<SnapshotState>(file, {
        version: SCHEMA_VERSION,
        journalSeq: 0,
        collections: {},
      });
      const journal = new Journal(settings.dataDir);
      const store = new Store(settings, lock, journal, low, file);
      await store.load();
      return store;
    } catch (error) {
      await lock.release();
      throw error;
    }
  }

  /** Runs one step of opening, adding its duration to `openTimings`. */
  timeOpening<T>(step: string, run: () => T): T {
    const started = performance.now();
    try {
      return run();
    } finally {
      this.openTimings[step] = Math.round(performance.now() - started);
    }
  }

  private async load(): Promise<void> {
    const started = performance.now();
    let read: ReadSnapshot | null;
    try {
      read = await this.snapshotFile.readSnapshot(this.openTimings);
    } catch (error) {
      // Every generation is unreadable. While the journal still starts at the very first change,
      // replaying it from an empty base loses nothing; otherwise refuse to open.
      const first = (await this.journal.segments())[0];
      if (!(error instanceof StorageCorruptError) || first?.firstSeq !== 1) throw error;
      this.options.log.warn(`${error.message}; rebuilt from the journal`);
      read = { format: 'document', data: emptySnapshotDocument() };
    }
    const { version, lastSeq, bytes } =
      read?.format === 'lines'
        ? await this.loadLines(read)
        : await this.loadDocument(read?.data ?? null);
    this.snapshot.data = emptySnapshot(lastSeq);
    this.seq = this.durableSeq = lastSeq;
    this.journalBytes = bytes;
    this.lastSnapshotBytesEstimate = await this.snapshotBytes();
    await this.journal.startSegment(lastSeq + 1);
    if (SCHEMA_VERSION !== version) {
      this.options.log.info(`Migrated the database from version ${version} to ${SCHEMA_VERSION}`);
    }
    if (SCHEMA_VERSION !== version || !read) {
      this.compactRequested = true;
      this.scheduleCompaction();
      await this.idle();
    } else {
      this.scheduleCompaction();
    }
    this.openTimings.store = Math.round(performance.now() - started);
  }

  /**
   * A snapshot in lines (version 3 on): its parsed collections become the maps as they are, and
   * the journal is replayed onto them; a deferred collection keeps its section and the journal's
   * changes to it, for `map`.
   */
  private async loadLines(read: Extract<ReadSnapshot, { format: 'lines' }>) {
    // Lines began with version 3: this build's, or a newer one's, which `migrate` refuses. (A later
    // version must migrate a lines file here, not an empty document.)
    if (read.version !== SCHEMA_VERSION) migrate({ ...read, collections: {} });
    for (const name of COLLECTIONS) {
      const parsed = read.collections.get(name);
      if (parsed) this.maps.set(name, parsed);
      const section = read.deferred.get(name);
      if (section) this.deferred.set(name, { section, replayed: [] });
    }
    const replayStarted = performance.now();
    const { entries, bytes } = await this.journal.replay(read.journalSeq, (message) =>
      this.options.log.error({}, message),
    );
    for (const entry of entries) {
      for (const op of entry.ops) {
        const col = op.col as CollectionName;
        if (!this.maps.has(col)) continue; // as before: only known collections are kept
        const value =
          op.type === 'put'
            ? replayedValue(op, (c, key) => this.map(c as CollectionName)?.get(key))
            : undefined;
        const deferred = this.deferred.get(col);
        if (deferred) deferred.replayed.push([op.key, value]);
        else setOrDelete(this.maps.get(col)!, op.key, value);
      }
    }
    this.openTimings.journalReplay = Math.round(performance.now() - replayStarted);
    const lastSeq = entries.at(-1)?.seq ?? read.journalSeq;
    return { version: read.version, lastSeq, bytes };
  }

  /** A snapshot as one JSON document (versions 1 and 2), or none: replayed, migrated, mapped. */
  private async loadDocument(snapshot: SnapshotData | null) {
    const base = snapshot ?? emptySnapshotDocument();
    const replayStarted = performance.now();
    const { entries, bytes } = await this.journal.replay(base.journalSeq, (message) =>
      this.options.log.error({}, message),
    );
    const collections = base.collections;
    for (const entry of entries) {
      for (const op of entry.ops) {
        const records = (collections[op.col] ??= {});
        if (op.type === 'put')
          records[op.key] = replayedValue(op, (col, key) => collections[col]?.[key]);
        else delete records[op.key];
      }
    }
    this.openTimings.journalReplay = Math.round(performance.now() - replayStarted);
    const lastSeq = entries.at(-1)?.seq ?? base.journalSeq;
    // Without any snapshot, the directory is new, or version 1 wrote it: that version made its
    // first snapshot only once the journal had grown. Later ones write one at creation (below).
    const version = snapshot ? snapshot.version : entries.length > 0 ? 1 : SCHEMA_VERSION;
    const migrated = migrate({ version, journalSeq: lastSeq, collections });
    this.timeOpening('maps', () => {
      for (const name of COLLECTIONS) {
        const map = this.maps.get(name)!;
        const records = migrated.collections[name] ?? {};
        // for-in rather than Object.entries: no pair array per record (100k of them at start).
        for (const key in records) map.set(key, records[key]);
      }
    });
    return { version, lastSeq, bytes };
  }

  /** The live map of a collection, parsing it first if its snapshot section was deferred. */
  private map(name: CollectionName): Map<string, unknown> {
    const deferred = this.deferred.get(name);
    if (deferred) {
      this.deferred.delete(name);
      const map = deferred.section.parse();
      for (const [key, value] of deferred.replayed) setOrDelete(map, key, value);
      this.maps.set(name, map);
    }
    return this.maps.get(name)!;
  }

  /** Read access: the live map of a collection. Treat values as immutable. */
  collection<T>(name: CollectionName): ReadonlyMap<string, T> {
    return this.map(name) as ReadonlyMap<string, T>;
  }

  get<T>(col: CollectionName, key: string): T | undefined {
    return this.map(col).get(key) as T | undefined;
  }

  onChange(listener: ChangeListener): void {
    this.listeners.push(listener);
  }

  /** Applies `ops` now and resolves once they are durable; see the class invariants. */
  commit(ops: Op[]): Promise<void> {
    if (this.closed) return Promise.reject(new StorageWriteError('The store is closed'));
    for (const op of ops) if (op.type === 'put' && op.embed) this.assertEmbedded(op);
    const seq = ++this.seq;
    const undo = ops.map((op) =>
      this.apply(op.col as CollectionName, op.key, op.type === 'put' ? op.value : undefined),
    );
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ seq, line: serializeEntry({ seq, ops }), undo, resolve, reject });
      this.startWrite();
      this.flushing ??= this.flush();
    });
  }

  /** An embedded record must be the stored one itself, or replay would rebuild another value. */
  private assertEmbedded(op: Extract<Op, { type: 'put' }>): void {
    const { field, col, key } = op.embed!;
    const stored = this.maps.has(col as CollectionName)
      ? this.map(col as CollectionName).get(key)
      : undefined;
    if (stored === undefined || (op.value as Record<string, unknown>)[field] !== stored)
      throw new Error(`${op.col}/${op.key}.${field} is not the record stored at ${col}/${key}`);
  }

  private apply(col: CollectionName, key: string, next: unknown): UndoEntry {
    if (!this.maps.has(col)) throw new Error(`Unknown collection ${col}`);
    const map = this.map(col);
    const prev = map.get(key);
    setOrDelete(map, key, next);
    for (const listener of this.listeners) listener(col, key, prev, next);
    return { col, key, prev };
  }

  /**
   * Starts writing every queued commit as one group (group commit), unless
   * `MAX_WRITES_IN_FLIGHT` groups are being written already or the journal is held (a segment
   * switch or a failed write waits for the writes in flight): then the queue waits, and grows,
   * until a write ends. Overlapping writes matter under load: a commit that had to wait for the
   * write before it to end, and for the event loop to get round to that, waited about twice
   * as long for its own line.
   */
  private startWrite(): void {
    if (this.holding || this.queue.length === 0) return;
    if (this.inFlight.length >= MAX_WRITES_IN_FLIGHT) return;
    const group = this.queue;
    this.queue = [];
    // Settles with the bytes written or the error, never rejects: the flush loop reads each in turn.
    const outcome = this.journal
      .write(group.map((batch) => batch.line).join(''))
      .catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
    this.inFlight.push({ group, outcome });
  }

  /**
   * The flush slot: one loop at a time acknowledges the groups written, in the order they were
   * started (a group is durable only once every group before it is: a crash may leave a later
   * one whole behind a torn earlier one, which replay cuts off with it). Segment switches
   * (`scheduleCompaction`) take the same slot, when no write is in flight.
   */
  private async flush(): Promise<void> {
    for (;;) {
      if (this.inFlight.length === 0) {
        if (!this.compaction && this.wantsCompaction()) {
          this.holding = true;
          await this.captureAndCompact();
        }
        this.holding = false;
        this.startWrite();
        if (this.inFlight.length === 0) break;
      }
      const { group, outcome } = this.inFlight[0]!;
      const written = await outcome;
      this.inFlight.shift();
      if (written instanceof Error) {
        await this.cutBack(group, written);
        continue;
      }
      this.journalBytes += written;
      this.durableSeq = group.at(-1)!.seq;
      for (const batch of group) batch.resolve();
      // A segment switch waits for the writes in flight; the queue waits for it.
      if (!this.compaction && this.wantsCompaction()) this.holding = true;
      else this.startWrite();
    }
    this.flushing = null;
  }

  /**
   * A group's write failed: once the writes after it have ended, cuts the journal back to where
   * that group began and rolls back it and every commit after it (none of them is durable).
   */
  private async cutBack(group: Batch[], cause: Error): Promise<void> {
    this.holding = true;
    await Promise.all(this.inFlight.map((write) => write.outcome));
    await this.journal.cutBack();
    const failed = [...group, ...this.inFlight.flatMap((write) => write.group), ...this.queue];
    this.inFlight = [];
    this.queue = [];
    this.holding = false;
    this.rollBack(failed, cause);
  }

  private rollBack(failed: Batch[], cause: Error): void {
    this.options.log.error(
      { err: cause },
      'Journal write failed; rolling back the uncommitted changes',
    );
    for (const batch of [...failed].reverse()) {
      for (const entry of [...batch.undo].reverse()) this.apply(entry.col, entry.key, entry.prev);
    }
    this.seq = this.durableSeq;
    const error = new StorageWriteError(`Could not write the journal: ${cause.message}`);
    for (const batch of failed) batch.reject(error);
  }

  /** Amortized: a snapshot costs O(size), so it is made only after O(size) journal bytes. */
  private wantsCompaction(): boolean {
    const threshold = Math.max(this.options.compactMinBytes, this.lastSnapshotBytesEstimate);
    return this.compactRequested || this.journalBytes > threshold;
  }

  private scheduleCompaction(): void {
    if (this.compaction || this.closed || !this.wantsCompaction()) return;
    // The segment switch must not race a journal write: run it in the flush slot, which
    // compacts once no write is in flight.
    this.flushing ??= this.flush();
  }

  /**
   * Captures the durable state by reference (pending, not-yet-durable changes are looked through
   * via their undo entries), switches the journal to a new segment, and writes the snapshot in
   * the background. Called only between journal writes; resolves once the segment is switched,
   * so the next group goes to the new segment.
   */
  private async captureAndCompact(): Promise<void> {
    const collections = this.captureDurableState();
    const seq = this.durableSeq;
    this.journalBytes = 0;
    this.compactRequested = false;
    let switched!: () => void;
    const segmentSwitched = new Promise<void>((resolve) => (switched = resolve));
    this.compaction = (async () => {
      try {
        await this.journal.startSegment(seq + 1).finally(switched);
        this.snapshot.data = { version: SCHEMA_VERSION, journalSeq: seq, collections };
        try {
          await this.snapshot.write();
        } finally {
          // Written (or not): the captured collections are not kept until the next snapshot.
          this.snapshot.data = emptySnapshot(seq);
        }
        // Keep the journal back to the oldest generation kept, so that falling back to any
        // generation (or, before there are enough, to an empty base) still replays to the present.
        const seqs = await this.snapshotFile.generationSeqs();
        if (seqs.length > this.options.generations)
          await this.journal.removeSegmentsThrough(Math.min(...seqs));
        this.lastSnapshotBytesEstimate = await this.snapshotBytes();
      } catch (error) {
        this.options.log.error(
          { err: error },
          'Snapshot failed; the journal still holds every change',
        );
      } finally {
        this.compaction = null;
      }
    })();
    await segmentSwitched;
  }

  /**
   * The durable state: each map copied (its records shared), with the changes not yet durable
   * undone in the copies; a collection still deferred is written back as its section (nothing
   * can have changed it: a change parses it first).
   */
  private captureDurableState(): SnapshotState['collections'] {
    const collections: Record<string, Map<string, unknown> | DeferredSection> = {};
    for (const name of COLLECTIONS) {
      const deferred = this.deferred.get(name);
      collections[name] =
        deferred && deferred.replayed.length === 0 ? deferred.section : new Map(this.map(name));
    }
    const overlay = new Map<string, UndoEntry>();
    for (const batch of this.queue) {
      for (const entry of batch.undo) {
        const id = `${entry.col}\u0000${entry.key}`;
        if (!overlay.has(id)) overlay.set(id, entry);
      }
    }
    for (const entry of overlay.values()) {
      setOrDelete(collections[entry.col] as Map<string, unknown>, entry.key, entry.prev);
    }
    return collections;
  }

  /**
   * The durable state of `names`, read in one synchronous step: each map copied (its records
   * shared), with every change not yet durable (being written or queued) undone in the copies.
   * What a backup reads while commits go on: the journal up to `durableSeq` applied to the
   * snapshot, without waiting for a write or holding one back.
   */
  durableView(names: readonly CollectionName[]): StoreView {
    const maps = new Map<CollectionName, Map<string, unknown>>(
      names.map((name) => [name, new Map(this.map(name))]),
    );
    const pending = [...this.inFlight.flatMap((write) => write.group), ...this.queue];
    // The oldest undo entry of a key holds its durable value: walk newest first, older overwrite.
    for (const batch of [...pending].reverse()) {
      for (const entry of [...batch.undo].reverse()) {
        const map = maps.get(entry.col);
        if (map) setOrDelete(map, entry.key, entry.prev);
      }
    }
    return {
      get: <T>(col: CollectionName, key: string) => maps.get(col)?.get(key) as T | undefined,
      collection: <T>(col: CollectionName) => {
        const map = maps.get(col);
        if (!map) throw new Error(`${col} is not part of this view`);
        return map as ReadonlyMap<string, T>;
      },
    };
  }

  private async snapshotBytes(): Promise<number> {
    return stat(this.snapshotFile.path).then(
      (info) => info.size,
      () => 0,
    );
  }

  /** Writes a snapshot now and waits for it (used after migrations and by tests). */
  async compactNow(): Promise<void> {
    await this.idle();
    this.compactRequested = true;
    this.scheduleCompaction();
    await this.idle();
  }

  /** Resolves when every commit so far is durable and no snapshot is being written. */
  async idle(): Promise<void> {
    while (this.flushing || this.compaction) {
      await this.flushing;
      await this.compaction;
    }
  }

  /** Test seam: the next journal write fails with `error`. */
  injectWriteFault(error: Error): void {
    this.journal.injectFault(error);
  }

  /** Finishes pending writes, closes files and releases the data directory. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.idle();
    await this.journal.close();
    await this.lock.release();
  }
}
