import { createHash, randomBytes, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { consume } from '../lib/consume';
import { syncDirectory } from './durable-file';

/**
 * A partial's name: the blob's sha256 (the resumable one), or that and a random suffix (a whole
 * upload received beside the resumable one while that one is under way; never resumed).
 */
const PARTIAL_NAME = /^[0-9a-f]{64}(\.[0-9a-f]{16})?$/;
/** The resumable partial of a blob: its sha256 alone. */
const SHA256_HEX = /^[0-9a-f]{64}$/;
/** Network chunks are small; writing them in batches saves a thread-pool round trip per chunk. */
const WRITE_BATCH_BYTES = 1024 * 1024;

export interface AppendOptions {
  /** Where the bytes go: the kept part's length (the caller checked it under its lock). */
  offset: number;
  /** The most bytes the partial may reach: the declared end of this piece, or the size limit. */
  limit: number;
  /** Called instead of writing past `limit`; its error fails the append. */
  tooMuch: () => Error;
}

export interface Appended {
  /** The partial's length after this append. */
  length: number;
  /** The SHA-256 of the whole partial, 0 to `length`: only when this append reached the end. */
  digest: () => Promise<string>;
}

/**
 * Blob uploads under way, kept between requests so that an upload cut short can be continued:
 * `<dir>/<sha256>`, one file per blob, whatever was received of it, fsync'd. Partials outlive a
 * restart (unlike the blob store's temp files); one left untouched for a while is removed.
 */
export class PartialUploads {
  private constructor(readonly dir: string) {}

  static async open(dir: string): Promise<PartialUploads> {
    await mkdir(dir, { recursive: true });
    return new PartialUploads(dir);
  }

  pathOf(name: string): string {
    if (!PARTIAL_NAME.test(name)) throw new Error(`Not a partial's name: ${name}`);
    return join(this.dir, name);
  }

  /** A fresh name for a partial of `sha256` received beside its resumable one. */
  static asideName(sha256: string): string {
    return `${sha256}.${randomBytes(8).toString('hex')}`;
  }

  /** How many bytes of the blob are kept (0 when none). */
  async offset(sha256: string): Promise<number> {
    return (await this.size(sha256)) ?? 0;
  }

  /** How many bytes of the blob are kept, or undefined when no upload of it is. */
  async size(sha256: string): Promise<number | undefined> {
    return stat(this.pathOf(sha256)).then(
      (stats) => stats.size,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return undefined;
        throw error;
      },
    );
  }

  /** The sha256 of every partial kept. */
  async list(): Promise<string[]> {
    return (await readdir(this.dir)).filter((name) => SHA256_HEX.test(name));
  }

  /**
   * Writes `source` into the partial from `offset` on (0 starts it afresh), hashing as it goes
   * (from the kept part on disk first, when continuing). Whatever arrives is written and fsync'd
   * even when the source fails midway (a cut connection), so the next request can continue from
   * there; the failure is then thrown. Call one at a time per blob.
   */
  async append(sha256: string, source: Readable, options: AppendOptions): Promise<Appended> {
    const path = this.pathOf(sha256);
    const hash = createHash('sha256');
    const hashedKept = options.offset > 0 ? hashFile(hash, path, options.offset) : undefined;
    const handle = await open(path, options.offset > 0 ? 'r+' : 'w', 0o600);
    let position = options.offset;
    let batch: Uint8Array[] = [];
    let batchBytes = 0;
    let writing: Promise<unknown> = Promise.resolve();
    const flush = () => {
      const chunks = batch;
      const at = position - batchBytes;
      batch = [];
      batchBytes = 0;
      const previous = writing;
      writing = previous.then(() => handle.writev(chunks, at));
      return previous;
    };
    try {
      try {
        await hashedKept;
        await consume(source, new AbortController().signal, (chunk) => {
          if (position + chunk.byteLength > options.limit) throw options.tooMuch();
          hash.update(chunk);
          batch.push(chunk);
          batchBytes += chunk.byteLength;
          position += chunk.byteLength;
          return batchBytes >= WRITE_BATCH_BYTES ? flush() : undefined;
        });
      } finally {
        // Every byte received is kept, also when the client went away in the middle.
        if (batchBytes > 0) void flush().catch(() => {});
        await writing;
        await handle.truncate(position);
        await handle.sync();
      }
    } finally {
      await handle.close();
      // A new partial's name must survive a crash too, or its fsync'd bytes are lost with it.
      if (options.offset === 0) await syncDirectory(this.dir);
    }
    return { length: position, digest: async () => hash.digest('hex') };
  }

  /** Drops the blob's partial, if any. */
  async remove(sha256: string): Promise<void> {
    await unlink(this.pathOf(sha256)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }

  /** Removes partials untouched for `maxAgeMs`; answers how many. */
  async removeOlderThan(maxAgeMs: number, now = Date.now()): Promise<number> {
    let removed = 0;
    for (const name of await readdir(this.dir)) {
      if (!PARTIAL_NAME.test(name)) continue;
      const stats = await stat(join(this.dir, name)).catch(() => undefined);
      if (!stats || now - stats.mtimeMs < maxAgeMs) continue;
      await this.remove(name);
      removed++;
    }
    if (removed > 0) await syncDirectory(this.dir);
    return removed;
  }
}

/** Feeds the first `length` bytes of the file at `path` into `hash`. */
async function hashFile(hash: Hash, path: string, length: number): Promise<void> {
  for await (const chunk of createReadStream(path, { start: 0, end: length - 1 })) {
    hash.update(chunk as Buffer);
  }
}
