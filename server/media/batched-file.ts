import type { FileHandle } from 'node:fs/promises';
import { SerialQueue } from '../lib/serial-queue';

/** Network chunks are small; writing them in batches saves a thread-pool round trip per chunk. */
const WRITE_BATCH_BYTES = 1024 * 1024;

/**
 * A file written from a stream of chunks: in batches, with at most one batch being written while
 * the next fills, and an fsync in the background every `syncEveryBytes` (none when Infinity).
 */
export class BatchedFile {
  private batch: Uint8Array[] = [];
  private batchBytes = 0;
  private readonly writes = new SerialQueue();
  /** The batch queued last; `add` hands it out so that the caller waits for it. */
  private lastWrite: Promise<void> = Promise.resolve();
  /** A write that failed: every batch after it fails too, so the file never has a hole. */
  private writeFailure: unknown;
  private syncing: Promise<unknown> | null = null;
  private unsyncedBytes = 0;
  /** A background fsync that failed: the data may not be on disk, whatever later ones say. */
  private syncFailure: unknown;

  constructor(
    private readonly handle: FileHandle,
    private readonly syncEveryBytes: number,
  ) {}

  /** Returns a promise when the previous batch is still being written: wait before adding more. */
  add(chunk: Uint8Array): Promise<unknown> | undefined {
    this.batch.push(chunk);
    this.batchBytes += chunk.byteLength;
    return this.batchBytes >= WRITE_BATCH_BYTES ? this.writeBatch() : undefined;
  }

  /** Writes what is left; every byte added is in the file when this resolves. */
  async written(): Promise<void> {
    if (this.batchBytes > 0) void this.writeBatch().catch(() => {}); // see `writeFailure`
    await this.writes.idle();
    if (this.writeFailure) throw this.writeFailure;
  }

  /** fsyncs the file; call after `written`. */
  async sync(): Promise<void> {
    await this.syncing;
    if (this.syncFailure) throw this.syncFailure;
    await this.handle.sync();
  }

  /** Closes the file once nothing is in flight on it, whether or not it all went well. */
  async close(): Promise<void> {
    await this.writes.idle();
    await this.syncing;
    await this.handle.close();
  }

  /**
   * Queues the batch behind the one being written, and returns that one: waiting for it keeps
   * one batch in flight and one filling.
   */
  private writeBatch(): Promise<unknown> {
    const batch = this.batch;
    const bytes = this.batchBytes;
    this.batch = [];
    this.batchBytes = 0;
    const previous = this.lastWrite;
    this.lastWrite = this.writes.run(() => this.write(batch, bytes));
    this.lastWrite.catch(() => {}); // seen by whoever waits next (`add`, `written`), not unhandled
    return previous;
  }

  private async write(batch: Uint8Array[], bytes: number): Promise<void> {
    if (this.writeFailure) throw this.writeFailure;
    await this.handle.writev(batch).catch((error: unknown) => {
      this.writeFailure ??= error;
      throw error;
    });
    this.unsyncedBytes += bytes;
    this.syncInBackground();
  }

  /** One background fsync at a time, and the next as soon as enough was written meanwhile. */
  private syncInBackground(): void {
    if (this.syncing || this.syncFailure || this.unsyncedBytes < this.syncEveryBytes) return;
    this.unsyncedBytes = 0;
    this.syncing = this.handle
      .datasync()
      .catch((error: unknown) => (this.syncFailure ??= error))
      .finally(() => {
        this.syncing = null;
        this.syncInBackground();
      });
  }
}
