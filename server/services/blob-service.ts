import type { Readable } from 'node:stream';
import {
  admitUpload,
  type Admission,
  type QuotaLimits,
  type Waiting,
} from '../domain/upload-quota';
import { ApiError } from '../errors';
import { SerialQueue } from '../lib/serial-queue';
import { tooLarge } from '../media/receive-file';
import type { BlobStore, Release } from '../storage/blob-store';
import { PartialUploads } from '../storage/partial-uploads';
import type { UploadLedger } from '../storage/upload-ledger';

export interface BlobServiceOptions {
  blobs: BlobStore;
  partials: PartialUploads;
  /** Does a kept record (live, trashed or a kept revision) refer to this blob? */
  isReferenced: (sha256: string) => Promise<boolean>;
  /** The largest blob: the file size limit. */
  maxBytes: number;
  /** How long a blob uploaded or found present waits for the change that refers to it. */
  keepUnreferencedMs: number;
  /** Who uploaded what, for the quota. */
  ledger: UploadLedger;
  /** What uploads may keep before a change uses it, per user and in all. */
  quota: QuotaLimits;
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
  /**
   * The upload of each blob being received into its resumable partial now, settled when it ends
   * (well or not). One at a time per blob; an upload arriving meanwhile never waits for it (a
   * stalled client would hold it up to the request timeout): see `uploadAside`.
   */
  private readonly receiving = new Map<string, Promise<unknown>>();
  /**
   * Uploads admitted in this process and still running, with the bytes each may reach: counted
   * in the quota with what is on disk, so that uploads started together cannot all pass it.
   * Admission runs one at a time.
   */
  private readonly admitted = new Map<string, Waiting>();
  private readonly admission = new SerialQueue();

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
  async upload(
    sha256: string,
    body: Readable,
    piece: Piece,
    uploader: string,
  ): Promise<UploadResult> {
    const { maxBytes } = this.options;
    if ((piece.total ?? 0) > maxBytes) throw tooLarge(maxBytes);
    const existing = await this.options.blobs.sizeOf(sha256);
    if (existing !== undefined) {
      this.options.blobs.keep(sha256, this.options.keepUnreferencedMs);
      return { status: 'existed', size: existing };
    }
    // Checked and set in one turn: two uploads can never both take the resumable partial.
    if (this.receiving.has(sha256)) return this.uploadAside(sha256, body, piece);
    const upload = this.admit(sha256, piece, uploader).then((room) =>
      this.continueUpload(sha256, body, piece, room),
    );
    const settled = upload.catch(() => {});
    this.receiving.set(sha256, settled);
    try {
      return await upload;
    } finally {
      this.admitted.delete(sha256);
      // Another upload may have landed the blob meanwhile: what this one kept is stale then.
      // Still marked as receiving, so no other upload takes the partial while it goes.
      if ((await this.options.blobs.sizeOf(sha256).catch(() => undefined)) !== undefined)
        await this.options.partials.remove(sha256).catch(() => {});
      this.receiving.delete(sha256);
    }
  }

  /**
   * An upload of a blob whose resumable partial another request is writing. A whole one is
   * received into a partial of its own, checked and moved into the blob store like any other
   * (the first to land wins; the same bytes are dropped by the others); it is not resumable. A
   * range cannot continue a partial still being written: 409 with the offset kept so far, at
   * once, so the client asks again (HEAD) instead of waiting.
   */
  private async uploadAside(sha256: string, body: Readable, piece: Piece): Promise<UploadResult> {
    const { blobs, partials, maxBytes } = this.options;
    if (piece.kind === 'range') {
      const kept = await partials.offset(sha256);
      throw new ApiError(
        'UPLOAD_OFFSET_MISMATCH',
        `Another upload of this blob is under way (${kept} bytes kept so far); ask again in a moment where to continue.`,
        [],
        { 'upload-offset': String(kept) },
      );
    }
    const name = PartialUploads.asideName(sha256);
    try {
      const appended = await partials.append(name, body, {
        offset: 0,
        limit: piece.total ?? maxBytes,
        tooMuch: () =>
          piece.total !== undefined
            ? new ApiError('VALIDATION_FAILED', 'The body has more bytes than it declared.')
            : tooLarge(maxBytes),
      });
      const total = piece.total ?? appended.length;
      if (appended.length < total)
        throw new ApiError('VALIDATION_FAILED', 'The body has fewer bytes than it declared.');
      if ((await appended.digest()) !== sha256) throw hashMismatch(sha256, total);
      const release = await blobs.adopt(partials.pathOf(name), sha256, Promise.resolve());
      blobs.keep(sha256, this.options.keepUnreferencedMs);
      release();
      return { status: 'created', size: total };
    } finally {
      // Adopted (renamed away), dropped by adopt, or refused: nothing of it stays.
      await partials.remove(name).catch(() => {});
    }
  }

  /**
   * Refuses the upload when the blob would not fit the quota beside what is waiting (413 for the
   * uploader's bound, 507 for everyone's); else notes who sends it and answers the most bytes it
   * may have (a body of unknown length is stopped there).
   */
  private admit(sha256: string, piece: Piece, uploader: string) {
    return this.admission.run(async () => {
      const waiting = new Map<string, Waiting>();
      for (const blob of await this.options.ledger.pending()) waiting.set(blob.sha256, blob);
      for (const [sha, running] of this.admitted) {
        const onDisk = waiting.get(sha);
        if (!onDisk || onDisk.bytes < running.bytes) waiting.set(sha, running);
      }
      const admission = admitUpload(
        waiting.values(),
        { uploader, sha256, bytes: piece.total },
        this.options.quota,
      );
      if (!admission.admitted) throw quotaError(admission);
      const bytes = Math.min(piece.total ?? this.options.maxBytes, admission.room);
      this.admitted.set(sha256, { sha256, bytes, partial: true, uploaders: [uploader] });
      await this.options.ledger.mark(uploader, sha256);
      return admission;
    });
  }

  private async continueUpload(
    sha256: string,
    body: Readable,
    piece: Piece,
    room: Admission & { admitted: true },
  ) {
    const { blobs, partials, maxBytes } = this.options;
    const kept = await partials.offset(sha256);
    if (piece.kind === 'range' && piece.start !== kept) throw offsetMismatch(kept, piece.start);
    const offset = piece.kind === 'range' ? piece.start : 0;
    const limit =
      piece.kind === 'range' ? piece.end + 1 : (piece.total ?? Math.min(maxBytes, room.room));
    let appended;
    try {
      appended = await partials.append(sha256, body, {
        offset,
        limit,
        tooMuch: () => {
          if (piece.kind === 'range' || piece.total !== undefined)
            return new ApiError('VALIDATION_FAILED', 'The body has more bytes than it declared.');
          return room.room < maxBytes
            ? quotaError({ ...room, admitted: false })
            : tooLarge(maxBytes);
        },
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
      throw hashMismatch(sha256, total);
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

/** The refusal of an upload beyond the quota, in words a curator (or replica) can act on. */
function quotaError(refusal: Admission & { admitted: false }): ApiError {
  const waitingWords =
    'Uploads wait here until a change that uses them is sent; unused ones are removed within ' +
    'an hour.';
  switch (refusal.bound) {
    case 'userPartials':
      return new ApiError(
        'UPLOAD_QUOTA_EXCEEDED',
        `You have ${refusal.used} unfinished uploads, and at most ${refusal.limit} may wait at ` +
          `once. Finish them, or wait an hour for those left untouched to be removed.`,
      );
    case 'userBytes':
      return new ApiError(
        'UPLOAD_QUOTA_EXCEEDED',
        `Your uploads not yet used by any portfolio would pass ${inWords(refusal.limit)}` +
          (refusal.used > 0 ? ` (${inWords(refusal.used)} are waiting already)` : '') +
          `. ${waitingWords}`,
      );
    case 'totalBytes':
      return new ApiError(
        'UPLOAD_SPACE_FULL',
        `The server's room for uploads not yet used by any portfolio (` +
          `${inWords(refusal.limit)} for everyone) is full. ${waitingWords} Try again later.`,
      );
  }
}

/** A size as people say it: `1.5 MB`, `600 KB`. */
function inWords(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${+(bytes / 1024 / 1024).toFixed(1)} MB`;
  return `${Math.ceil(bytes / 1024)} KB`;
}

function hashMismatch(sha256: string, total: number): ApiError {
  return new ApiError(
    'BLOB_HASH_MISMATCH',
    `The ${total} bytes received do not hash to ${sha256}; nothing was kept, send the blob again.`,
  );
}

function offsetMismatch(kept: number, sent: number): ApiError {
  return new ApiError(
    'UPLOAD_OFFSET_MISMATCH',
    `The upload continues at byte ${sent}, but ${kept} bytes of this blob are kept; continue at ${kept}.`,
    [],
    { 'upload-offset': String(kept) },
  );
}
