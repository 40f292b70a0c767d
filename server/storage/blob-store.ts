import { randomBytes } from 'node:crypto';
import { createReadStream, type ReadStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, stat, unlink, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { SerialQueue } from '../lib/serial-queue';
import { syncDirectory } from './durable-file';

const SHA256_HEX = /^[0-9a-f]{64}$/;
const READ_CHUNK_BYTES = 1024 * 1024;

export interface BlobStoreOptions {
  /** The blob root, `<dataDir>/blobs`. */
  root: string;
  /**
   * Does any stored record (live, trashed or a kept revision) point at this blob? Derived from
   * the database, never kept here; asked right before a removal.
   */
  isReferenced: (sha256: string) => boolean | Promise<boolean>;
  /** Called with every blob removed, so caches derived from it (thumbnails) can go too. */
  onRemoved?: (sha256: string) => Promise<void>;
  /** Resolves once every change committed so far is durable (the store's `idle`). */
  durable?: () => Promise<void>;
  log?: { warn(msg: string): void; error(obj: unknown, msg: string): void };
  /**
   * Several server instances share this directory (PostgreSQL). Another instance's uploads are
   * not pinned here, so nothing younger than this is removed: no unreferenced blob written or
   * re-used within it, no temp file of an upload started within it. Undefined: one process owns
   * the directory, and its own pins are the whole truth.
   */
  sharedGraceMs?: number;
}

/**
 * What an object store (S3 and the like) would implement to hold the blobs instead of a shared
 * directory: content-addressed, write-once bytes. The rest of the server reaches blobs through
 * these calls only (plus `pathOf` for the thumbnail maker, which needs a local file).
 */
export interface BlobStorage {
  tempPath(): string;
  adopt(tempPath: string, sha256: string, fileDurable: Promise<void>): Promise<Release>;
  read(sha256: string): Promise<Buffer>;
  readStream(sha256: string, range?: { start: number; end: number }): ReadStream;
  hold(sha256s: Iterable<string>): Release;
  collect(sha256s: Iterable<string>): void;
  collectUnreferenced(referenced: ReadonlySet<string>): Promise<number>;
  idle(): Promise<void>;
}

/** Keeps a blob alive while the record that will point to it is being committed. */
export type Release = () => void;

/**
 * File bytes on disk, addressed by SHA-256: `<root>/ab/cdef…` (the first two hex digits shard the
 * directory). Uploads are written to `<root>/tmp/` and moved into place only once they are
 * fsync'd, so a blob is durable before any record refers to it. Identical content is one blob.
 *
 * Which blobs are in use is never stored here: `isReferenced` asks the database. A blob is
 * removed when nothing refers to it and no upload holds it (`adopt` pins it until its record is
 * committed). Adopting and removing run one at a time, so a remove cannot slip between an
 * upload's "already there" check and its record commit.
 */
export class BlobStore implements BlobStorage {
  private readonly pins = new Map<string, number>();
  /** Blobs moved into place whose fsyncs are still running, by sha256. */
  private readonly becomingDurable = new Map<string, Promise<void>>();
  private readonly exclusive = new SerialQueue();
  private pendingRemovals = new Set<Promise<void>>();
  /** Blobs kept for a while though nothing refers to them yet (see `keep`), with their timers. */
  private readonly kept = new Map<string, NodeJS.Timeout>();

  private constructor(private readonly options: BlobStoreOptions) {}

  static async open(options: BlobStoreOptions): Promise<BlobStore> {
    const store = new BlobStore(options);
    await mkdir(store.tempDir, { recursive: true });
    return store;
  }

  get tempDir(): string {
    return join(this.options.root, 'tmp');
  }

  /** A fresh temp path for an upload in progress; the caller removes it on failure. */
  tempPath(): string {
    return join(this.tempDir, `${Date.now()}-${randomBytes(8).toString('hex')}.part`);
  }

  pathOf(sha256: string): string {
    if (!SHA256_HEX.test(sha256)) throw new Error(`Not a sha256: ${sha256}`);
    return join(this.options.root, sha256.slice(0, 2), sha256.slice(2));
  }

  /**
   * Moves a fully written temp file into place as the blob `sha256` and pins it; resolves once
   * the blob is durable. `fileDurable` is the temp file's own fsync (see `receiveToFile`): the
   * directory is fsync'd at the same time, and no record may refer to the blob before both are
   * done. When the blob already exists the temp file is dropped (same content), and this waits
   * until that blob is durable too. Call the returned release once the record that refers to the
   * blob is committed (or failed).
   */
  async adopt(tempPath: string, sha256: string, fileDurable: Promise<void>): Promise<Release> {
    this.pin(sha256);
    try {
      // Only the rename is done one at a time; the fsyncs are waited for outside, so one slow
      // upload does not hold up the others.
      const { durable } = await this.exclusive.run(() =>
        this.moveIntoPlace(tempPath, sha256, fileDurable),
      );
      await durable;
    } catch (error) {
      this.unpin(sha256);
      throw error;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.unpin(sha256);
    };
  }

  /**
   * Renames the temp file to the blob, or drops it when the blob exists. Returns what the blob
   * still waits for to be durable (wrapped: a promise returned as such would be waited for under
   * the lock). If that fails, the blob is removed: nothing may refer to it.
   */
  private async moveIntoPlace(
    tempPath: string,
    sha256: string,
    fileDurable: Promise<void>,
  ): Promise<{ durable: Promise<void> | undefined }> {
    const target = this.pathOf(sha256);
    if (await exists(target)) {
      await unlink(tempPath).catch(() => {}); // its fsync may still run: no matter
      const local = this.becomingDurable.get(sha256);
      if (local || this.options.sharedGraceMs === undefined) return { durable: local };
      // Another instance may have moved it into place without its fsync done yet: sync it here
      // too. Its new mtime keeps every instance's collector off it for the grace period.
      const now = new Date();
      return { durable: Promise.all([syncFile(target), utimes(target, now, now)]).then(() => {}) };
    }
    const shard = join(this.options.root, sha256.slice(0, 2));
    // Shards are made on first use and never removed, so the rename nearly always works.
    const created = await rename(tempPath, target).then(
      () => false,
      async (error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
        await mkdir(shard, { recursive: true });
        await rename(tempPath, target);
        return true;
      },
    );
    const durable = Promise.all([
      fileDurable,
      syncDirectory(shard),
      created ? syncDirectory(this.options.root) : undefined,
    ]).then(
      () => {},
      async (error: unknown) => {
        await unlink(target).catch(() => {});
        throw error;
      },
    );
    this.becomingDurable.set(sha256, durable);
    void durable
      .catch(() => {}) // the adopting uploads see it
      .finally(() => {
        if (this.becomingDurable.get(sha256) === durable) this.becomingDurable.delete(sha256);
      });
    return { durable };
  }

  /** Whether the blob is stored (a regular file in its place). */
  async has(sha256: string): Promise<boolean> {
    return stat(this.pathOf(sha256)).then(
      (found) => found.isFile(),
      () => false,
    );
  }

  /** The blob's size in bytes, or undefined when it is not stored. */
  async sizeOf(sha256: string): Promise<number | undefined> {
    return stat(this.pathOf(sha256)).then(
      (stats) => stats.size,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return undefined;
        throw error;
      },
    );
  }

  /**
   * Keeps a blob that nothing refers to yet from removal for `ms` (each call starts the time
   * again): a replica uploads a change's blobs before the change that refers to them. After that
   * it is removed unless something refers to it by then. Not kept across a restart: the start-up
   * sweep removes it, and the replica, told it is missing, sends it again.
   */
  keep(sha256: string, ms: number): void {
    const timer = this.kept.get(sha256);
    if (timer) clearTimeout(timer);
    else this.pin(sha256);
    const expire = setTimeout(() => {
      this.kept.delete(sha256);
      this.unpin(sha256);
      this.collect([sha256]);
    }, ms);
    expire.unref();
    this.kept.set(sha256, expire);
  }

  /** Forgets every `keep` without removing anything (closing). */
  forgetKept(): void {
    for (const [sha256, timer] of this.kept) {
      clearTimeout(timer);
      this.unpin(sha256);
    }
    this.kept.clear();
  }

  read(sha256: string): Promise<Buffer> {
    return readFile(this.pathOf(sha256));
  }

  /** The blob's bytes in reads of 1 MiB: a 5 MB image in 5 thread-pool round trips, not 80. */
  readStream(sha256: string, range?: { start: number; end: number }): ReadStream {
    return createReadStream(this.pathOf(sha256), { ...range, highWaterMark: READ_CHUNK_BYTES });
  }

  /**
   * Removes the blobs that nothing refers to any more, in the background. It first waits until
   * every change committed so far is durable, so that a change rolled back by a failed journal
   * write cannot resurrect a reference to a blob already gone.
   */
  collect(sha256s: Iterable<string>): void {
    const candidates = [...new Set(sha256s)];
    if (candidates.length === 0) return;
    const removal = (async () => {
      await this.options.durable?.().catch(() => {});
      for (const sha of candidates) await this.removeIfUnused(sha);
    })().catch((error: unknown) => this.options.log?.error({ err: error }, 'blob removal failed'));
    this.pendingRemovals.add(removal);
    void removal.finally(() => this.pendingRemovals.delete(removal));
  }

  /** Resolves once background removals started so far are done (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.pendingRemovals.size > 0) await Promise.all(this.pendingRemovals);
    await this.exclusive.idle();
  }

  /**
   * Startup sweep: temp files of uploads cut short, and blobs that no record refers to (a crash
   * between writing a blob and committing its record, or between a commit and a removal).
   * Runs before the server accepts requests, so nothing is pinned.
   */
  async sweep(): Promise<{ temp: number; orphans: number }> {
    let temp = 0;
    for (const name of await readdir(this.tempDir)) {
      if (await this.isRecent(join(this.tempDir, name))) continue; // another instance's upload
      await unlink(join(this.tempDir, name)).catch(() => {});
      temp++;
    }
    let orphans = 0;
    for (const sha of await this.stored()) {
      if (await this.isInUse(sha)) continue;
      await this.removeBlob(sha);
      orphans++;
    }
    if (temp + orphans > 0) await syncDirectory(this.tempDir);
    return { temp, orphans };
  }

  /**
   * Keeps blobs from removal while an answer still has to read them (an answer streams its files
   * one after another). The release removes any that lost their last reference meanwhile.
   */
  hold(sha256s: Iterable<string>): Release {
    const held = [...new Set(sha256s)];
    for (const sha of held) this.pin(sha);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const sha of held) this.unpin(sha);
      this.collect(held);
    };
  }

  /**
   * Removes every stored blob outside `referenced` (a set taken from the database, e.g. after
   * retention dropped revisions) that is still unused when its turn comes: each is checked again
   * under the removal lock, so an upload or commit since the set was taken keeps its blob.
   */
  async collectUnreferenced(referenced: ReadonlySet<string>): Promise<number> {
    await this.options.durable?.().catch(() => {}); // as in `collect`
    let removed = 0;
    for (const sha of await this.stored()) {
      if (referenced.has(sha)) continue;
      if (await this.removeIfUnused(sha)) removed++;
    }
    return removed;
  }

  /** The sha256 of every blob on disk. */
  private async stored(): Promise<string[]> {
    const found: string[] = [];
    for (const shard of await readdir(this.options.root)) {
      if (!/^[0-9a-f]{2}$/.test(shard)) continue;
      for (const rest of await readdir(join(this.options.root, shard))) {
        const sha = shard + rest;
        // A stray temp file of an older layout, or something dropped here by hand.
        if (SHA256_HEX.test(sha)) found.push(sha);
        else this.options.log?.warn(`Unknown file in the blob store left alone: ${shard}/${rest}`);
      }
    }
    return found;
  }

  private async isInUse(sha256: string): Promise<boolean> {
    return (
      (this.pins.get(sha256) ?? 0) > 0 ||
      (await this.options.isReferenced(sha256)) ||
      (await this.isRecent(this.pathOf(sha256)))
    );
  }

  /** Shared directory only: written (or re-used) within the grace period, by any instance. */
  private async isRecent(path: string): Promise<boolean> {
    const grace = this.options.sharedGraceMs;
    if (grace === undefined) return false;
    return stat(path).then(
      (info) => info.mtimeMs > Date.now() - grace,
      () => false,
    );
  }

  /** Removes the blob if nothing uses it; answers whether it did. */
  private removeIfUnused(sha256: string): Promise<boolean> {
    return this.exclusive.run(async () => {
      if (await this.isInUse(sha256)) return false;
      await this.removeBlob(sha256);
      return true;
    });
  }

  private async removeBlob(sha256: string): Promise<void> {
    const shard = join(this.options.root, sha256.slice(0, 2));
    await unlink(this.pathOf(sha256)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    await syncDirectory(shard);
    await this.options.onRemoved?.(sha256);
  }

  private pin(sha256: string): void {
    this.pins.set(sha256, (this.pins.get(sha256) ?? 0) + 1);
  }

  private unpin(sha256: string): void {
    const count = (this.pins.get(sha256) ?? 0) - 1;
    if (count > 0) this.pins.set(sha256, count);
    else this.pins.delete(sha256);
  }
}

async function syncFile(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return false;
      throw error;
    },
  );
}
