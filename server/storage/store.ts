import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Low } from 'lowdb';
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock';
import { Journal, replayedValue, serializeEntry, type Op } from './journal';
import { migrate, SCHEMA_VERSION } from './migrations';
import {
  SnapshotFile,
  StorageCorruptError,
  type Collections,
  type SnapshotData,
} from './snapshot-file';

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
] as const;
export type CollectionName = (typeof COLLECTIONS)[number];
export type { Op } from './journal';

export class StorageWriteError extends Error {
  override readonly name = 'StorageWriteError';
}

export type ChangeListener = (
  col: CollectionName,
  key: string,
  prev: unknown,
  next: unknown,
) => void;

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

/** What lowdb holds between snapshots: nothing of the records, which live in the maps. */
const emptySnapshot = (journalSeq: number): SnapshotData => ({
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
export class Store {
  private readonly maps = new Map<CollectionName, Map<string, unknown>>(
    COLLECTIONS.map((name) => [name, new Map<string, unknown>()]),
  );
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
    private readonly snapshot: Low<SnapshotData>,
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
      const low = new Low<SnapshotData>(file, {
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
    let found = true;
    const started = performance.now();
    try {
      const data = await this.snapshotFile.read(this.openTimings);
      if (data) this.snapshot.data = data;
      else found = false;
    } catch (error) {
      // Every generation is unreadable. While the journal still starts at the very first change,
      // replaying it from an empty base loses nothing; otherwise refuse to open.
      const first = (await this.journal.segments())[0];
      if (!(error instanceof StorageCorruptError) || first?.firstSeq !== 1) throw error;
      this.options.log.warn(`${error.message}; rebuilt from the journal`);
    }
    const snapshot = this.snapshot.data;
    const replayStarted = performance.now();
    const { entries, bytes } = await this.journal.replay(snapshot.journalSeq, (message) =>
      this.options.log.error({}, message),
    );
    const collections = snapshot.collections;
    for (const entry of entries) {
      for (const op of entry.ops) {
        const records = (collections[op.col] ??= {});
        if (op.type === 'put')
          records[op.key] = replayedValue(op, (col, key) => collections[col]?.[key]);
        else delete records[op.key];
      }
    }
    this.openTimings.journalReplay = Math.round(performance.now() - replayStarted);
    const lastSeq = entries.at(-1)?.seq ?? snapshot.journalSeq;
    // Without any snapshot, the directory is new, or version 1 wrote it: that version made its
    // first snapshot only once the journal had grown. Later ones write one at creation (below).
    const version = found ? snapshot.version : entries.length > 0 ? 1 : SCHEMA_VERSION;
    const migrated = migrate({ version, journalSeq: lastSeq, collections });
    this.timeOpening('maps', () => {
      for (const name of COLLECTIONS) {
        const map = this.maps.get(name)!;
        const records = migrated.collections[name] ?? {};
        // for-in rather than Object.entries: no pair array per record (100k of them at start).
        for (const key in records) map.set(key, records[key]);
      }
    });
    // The maps hold every record now: the parsed collections, dictionaries of 100k keys (12 MB
    // at 100k portfolios), are not kept for the next snapshot, which captures the maps.
    this.snapshot.data = emptySnapshot(lastSeq);
    this.seq = this.durableSeq = lastSeq;
    this.journalBytes = bytes;
    this.lastSnapshotBytesEstimate = await this.snapshotBytes();
    await this.journal.startSegment(lastSeq + 1);
    if (migrated.version !== version) {
      this.options.log.info(`Migrated the database from version ${version} to ${migrated.version}`);
    }
    if (migrated.version !== version || !found) {
      this.compactRequested = true;
      this.scheduleCompaction();
      await this.idle();
    } else if (this.wantsCompaction()) {
      this.scheduleCompaction();
    }
    this.openTimings.store = Math.round(performance.now() - started);
  }

  /** Read access: the live map of a collection. Treat values as immutable. */
  collection<T>(name: CollectionName): ReadonlyMap<string, T> {
    return this.maps.get(name) as ReadonlyMap<string, T>;
  }

  get<T>(col: CollectionName, key: string): T | undefined {
    return this.maps.get(col)!.get(key) as T | undefined;
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
    const stored = this.maps.get(col as CollectionName)?.get(key);
    if (stored === undefined || (op.value as Record<string, unknown>)[field] !== stored)
      throw new Error(`${op.col}/${op.key}.${field} is not the record stored at ${col}/${key}`);
  }

  private apply(col: CollectionName, key: string, next: unknown): UndoEntry {
    const map = this.maps.get(col);
    if (!map) throw new Error(`Unknown collection ${col}`);
    const prev = map.get(key);
    if (next === undefined) map.delete(key);
    else map.set(key, next);
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

  private captureDurableState(): Collections {
    const overlay = new Map<string, UndoEntry>();
    for (const batch of this.queue) {
      for (const entry of batch.undo) {
        const id = `${entry.col}\u0000${entry.key}`;
        if (!overlay.has(id)) overlay.set(id, entry);
      }
    }
    const collections: Collections = {};
    for (const [name, map] of this.maps) {
      const records: Record<string, unknown> = {};
      for (const [key, value] of map) records[key] = value;
      collections[name] = records;
    }
    for (const entry of overlay.values()) {
      if (entry.prev === undefined) delete collections[entry.col]![entry.key];
      else collections[entry.col]![entry.key] = entry.prev;
    }
    return collections;
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
