import type { Readable } from 'node:stream';
import { ApiError } from '../errors';
import { KeyedSerialQueue } from '../lib/keyed-serial-queue';
import { tooLarge } from '../media/receive-file';
import type { BlobStore, Release } from '../storage/blob-store';
import type { PartialUploads } from '../storage/partial-uploads';

export interface BlobServiceOptions {
  blobs: BlobStore;
  partials: PartialUploads;
  /** Does a kept record (live, trashed or a kept revision) refer to this blob? */
  isReferenced: (sha256: string) => Promise<boolean>;
  /** The largest blob: the file size limit. */
  maxBytes: number;
  /** How long a blob uploaded or found present waits for the change that refers to it. */
  keepUnreferencedMs: number;
}

/** Where the bytes of one PUT go: `Content-Range: bytes start-end/total`, or the whole blob. */
export type Piece =
  | { kind: 'whole'; total: number | undefined }
  | { kind: 'range'; start: number; end: number; total: number };

export type UploadResult =
  | { status: 'created' | 'existed'; size: number }
  | { status: 'partial'; size: number; offset: number };

export type BlobState = { stored: true; size: number } | { stored: false; offset: number };

/**
 * Blobs by content for sync (DESIGN §10): which ones the hub lacks, resumable uploads verified
 * against their SHA-256 and then written once into the blob store, and downloads of the blobs
 * some kept record refers to.
 */
export class BlobService {
  /** One upload per blob at a time: a second waits, then finds where the first one ended. */
  private readonly uploads = new KeyedSerialQueue();
  /** The upload of each blob being received now, settled when it ends (well or not). */
  private readonly receiving = new Map<string, Promise<unknown>>();

  constructor(private readonly options: BlobServiceOptions) {}

  /**
   * The blobs of `sha256s` not stored here, in their order. The ones stored are kept for a while,
   * though nothing may refer to them yet, so they are still there when the change that refers to
   * them arrives.
   */
  async missing(sha256s: string[]): Promise<string[]> {
    const { blobs, keepUnreferencedMs } = this.options;
    const missing: string[] = [];
    for (const sha256 of sha256s) {
      if ((await blobs.sizeOf(sha256)) === undefined) missing.push(sha256);
      else blobs.keep(sha256, keepUnreferencedMs);
    }
    return missing;
  }

  /**
   * Stored (with its size), or how much of an upload of it is kept. While an upload of the blob
   * is being received (often one whose connection was just cut and is still being written out),
   * this waits for it to end, up to `STATE_WAIT_MS`, so that the offset is the final one.
   */
  async state(sha256: string): Promise<BlobState> {
    const running = this.receiving.get(sha256);
    if (running) await settledWithin(running, STATE_WAIT_MS);
    const size = await this.options.blobs.sizeOf(sha256);
    if (size !== undefined) return { stored: true, size };
    return { stored: false, offset: await this.options.partials.offset(sha256) };
  }

  /**
   * Takes `body` as the piece of the blob `sha256` it says it is. A whole upload starts afresh;
   * a range must start where the kept part ends (else 409 with the offset). What arrives is kept
   * (fsync'd) even when the connection is cut. Once the blob is complete its SHA-256 is checked:
   * a mismatch drops the partial (400); a match moves it into the blob store, durably.
   */
  async upload(sha256: string, body: Readable, piece: Piece): Promise<UploadResult> {
    const { maxBytes } = this.options;
    if ((piece.total ?? 0) > maxBytes) throw tooLarge(maxBytes);
    const existing = await this.options.blobs.sizeOf(sha256);
    if (existing !== undefined) {
      this.options.blobs.keep(sha256, this.options.keepUnreferencedMs);
      return { status: 'existed', size: existing };
    }
    return this.uploads.run(sha256, async () => {
      const upload = this.continueUpload(sha256, body, piece);
      const settled = upload.catch(() => {});
      this.receiving.set(sha256, settled);
      try {
        return await upload;
      } finally {
        if (this.receiving.get(sha256) === settled) this.receiving.delete(sha256);
      }
    });
  }

  private async continueUpload(sha256: string, body: Readable, piece: Piece) {
    const { blobs, partials, maxBytes } = this.options;
    const kept = await partials.offset(sha256);
    if (piece.kind === 'range' && piece.start !== kept) throw offsetMismatch(kept, piece.start);
    const offset = piece.kind === 'range' ? piece.start : 0;
    const limit = piece.kind === 'range' ? piece.end + 1 : (piece.total ?? maxBytes);
    let appended;
    try {
      appended = await partials.append(sha256, body, {
        offset,
        limit,
        tooMuch: () =>
          piece.kind === 'range' || piece.total !== undefined
            ? new ApiError('VALIDATION_FAILED', 'The body has more bytes than it declared.')
            : tooLarge(maxBytes),
      });
    } catch (error) {
      // Bytes beyond what was declared make the whole partial suspect; a cut keeps it.
      if (error instanceof ApiError) await partials.remove(sha256);
      throw error;
    }
    const total = piece.total ?? appended.length;
    if (appended.length < total) {
      return { status: 'partial' as const, size: total, offset: appended.length };
    }
    if ((await appended.digest()) !== sha256) {
      await partials.remove(sha256);
      throw new ApiError(
        'BLOB_HASH_MISMATCH',
        `The ${total} bytes received do not hash to ${sha256}; nothing was kept, send the blob again.`,
      );
    }
    // The partial is fsync'd: adopting only renames it into place and fsyncs the directories.
    const release = await blobs.adopt(partials.pathOf(sha256), sha256, Promise.resolve());
    blobs.keep(sha256, this.options.keepUnreferencedMs);
    release();
    return { status: 'created' as const, size: total };
  }

  /**
   * A blob to serve: only one a kept record refers to, so that a caller learns nothing of blobs
   * it has no record of. The blob stays on disk until `release` (call it once the answer is sent).
   */
  async readable(sha256: string): Promise<{ size: number; release: Release }> {
    const notFound = () => new ApiError('BLOB_NOT_FOUND');
    if (!(await this.options.isReferenced(sha256))) throw notFound();
    const release = this.options.blobs.hold([sha256]);
    const size = await this.options.blobs.sizeOf(sha256);
    if (size === undefined) {
      release();
      throw notFound();
    }
    return { size, release };
  }
}

/** How long HEAD waits for an upload of the same blob under way to end. */
const STATE_WAIT_MS = 5000;

async function settledWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

function offsetMismatch(kept: number, sent: number): ApiError {
  return new ApiError(
    'UPLOAD_OFFSET_MISMATCH',
    `The upload continues at byte ${sent}, but ${kept} bytes of this blob are kept; continue at ${kept}.`,
    [],
    { 'upload-offset': String(kept) },
  );
}
