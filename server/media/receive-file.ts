import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { ApiError } from '../errors';
import { consume } from '../lib/consume';
import { BatchedFile } from './batched-file';
import { StreamHash, type Hashes } from './hasher';
import { assertComplete, inspectFile, inspectHead, type Inspection } from './inspect-file';

export interface ReceiveOptions {
  /** More bytes than this: 413. */
  maxBytes: number;
  /** Most pixels allowed in an image, checked from its header. */
  maxPixels: number;
  /** The client's file name: only used to tell legacy Office formats and CSV apart. */
  clientName: string;
}

export interface Received {
  size: number;
  /** md5 and sha256, from worker threads; may settle after the file is written. */
  hashes: Promise<Hashes>;
  /** What the file is; often known before its last byte arrived. */
  inspection: Promise<Inspection>;
  /** Settles once the file is fsync'd and closed; a blob may be adopted before, not committed. */
  durable: Promise<void>;
}

/**
 * Written bytes after which an fsync starts in the background, so that the one at the end has
 * little left to write out (5 MB in one fsync took 3.4 ms on the ext4 of our CI machines).
 */
const SYNC_EVERY_BYTES = 1024 * 1024;
/** The start of an upload kept in memory: enough for the header of nearly any JPEG or PNG. */
const HEAD_BYTES = 256 * 1024;
/** The end of an upload kept in memory, where a JPEG's or PNG's end marker must be. */
const TAIL_BYTES = 64 * 1024;

/**
 * Streams `source` into a new file at `path`, and resolves once every byte is written; `durable`
 * settles when it is fsync'd too. On the way:
 * - md5 and sha256 are computed in worker threads (StreamHash);
 * - a JPEG or PNG is inspected from its first bytes while the rest arrives, so a pixel bomb is
 *   refused before the rest of it is read; any other file is inspected once it is written, while
 *   the last fsync runs;
 * - what is written is fsync'd in the background every MiB.
 * Memory stays bounded: two write batches of 1 MiB, the head and tail kept for inspection, and
 * the few MiB waiting to be hashed (reading pauses beyond that). More than `maxBytes`: 413. On
 * failure the caller removes the partial file.
 */
export async function receiveToFile(
  source: Readable | Iterable<Uint8Array>,
  path: string,
  options: ReceiveOptions,
): Promise<Received> {
  const hash = StreamHash.start();
  let hashes: Promise<Hashes> | undefined;
  try {
    const file = new BatchedFile(await open(path, 'wx', 0o600), SYNC_EVERY_BYTES);
    const kept = new KeptBytes();
    let early: Promise<Inspection | null> | undefined;
    // A refusal from the head (a pixel bomb) stops the upload at once, even mid-stream.
    const refused = new AbortController();
    const inspectEarly = () => {
      early = inspectHead(kept.head(), options.maxPixels);
      early.catch((error: unknown) => refused.abort(error));
    };
    let size = 0;
    let handedOver = false;
    try {
      await consume(source, refused.signal, (chunk) => {
        size += chunk.byteLength;
        if (size > options.maxBytes) throw tooLarge(options.maxBytes);
        const hashingBehind = hash.update(chunk);
        kept.add(chunk);
        if (!early && kept.headBytes >= HEAD_BYTES) inspectEarly();
        const writingBehind = file.add(chunk);
        if (writingBehind && hashingBehind) return Promise.all([writingBehind, hashingBehind]);
        return writingBehind ?? hashingBehind;
      });
      await file.written();
      if (!early) inspectEarly(); // all of it fits in the head
      const tail = kept.tail();
      const inspection = early!.then((found) =>
        found ? assertComplete(found, tail) : inspectFile(path, { ...options, size, tail }),
      );
      inspection.catch(() => {}); // awaited by the caller, unless the fsync fails first
      hashes = hash.digest();
      hashes.catch(() => {}); // awaited by the caller, unless inspection fails first
      // The last fsync overlaps what follows; the file is closed once it is done.
      const durable = file.sync().finally(() => file.close());
      handedOver = true;
      durable.catch(() => {}); // awaited by adopting the file, unless anything fails first
      return { size, hashes, inspection, durable };
    } finally {
      if (!handedOver) await file.close();
    }
  } finally {
    if (!hashes) hash.abort(); // failed before the digest: the worker forgets this upload
  }
}

export function tooLarge(maxBytes: number): ApiError {
  return new ApiError(
    'PAYLOAD_TOO_LARGE',
    `The file is larger than the limit of ${formatBytes(maxBytes)}.`,
  );
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${+(bytes / 1024 / 1024).toFixed(1)} MB` : `${bytes} bytes`;
}

/** The first `HEAD_BYTES` and the last `TAIL_BYTES` or more of a stream, without copying it. */
class KeptBytes {
  headBytes = 0;
  private readonly headChunks: Uint8Array[] = [];
  private tailChunks: Uint8Array[] = [];
  private tailBytes = 0;

  add(chunk: Uint8Array): void {
    if (this.headBytes < HEAD_BYTES) {
      this.headChunks.push(chunk);
      this.headBytes += chunk.byteLength;
    }
    this.tailChunks.push(chunk);
    this.tailBytes += chunk.byteLength;
    while (this.tailBytes - this.tailChunks[0]!.byteLength >= TAIL_BYTES) {
      this.tailBytes -= this.tailChunks.shift()!.byteLength;
    }
  }

  /** A copy of the first `HEAD_BYTES` (or all, when fewer). */
  head(): Buffer {
    return Buffer.concat(this.headChunks, Math.min(this.headBytes, HEAD_BYTES));
  }

  /** A copy of the last `TAIL_BYTES` (or all, when fewer). */
  tail(): Buffer {
    const pieces: Uint8Array[] = [];
    let bytes = 0;
    for (let i = this.tailChunks.length - 1; i >= 0 && bytes < TAIL_BYTES; i--) {
      const chunk = this.tailChunks[i]!;
      const piece = chunk.subarray(Math.max(0, chunk.byteLength - (TAIL_BYTES - bytes)));
      pieces.unshift(piece);
      bytes += piece.byteLength;
    }
    return Buffer.concat(pieces, bytes);
  }
}
