/**
 * Whether one more blob upload fits the upload quota (issue 24, point 4): what uploads may keep
 * before a change uses it, per user and in all. Pure: the caller gathers what is waiting.
 */

export interface QuotaLimits {
  userBytes: number;
  userPartials: number;
  totalBytes: number;
}

/** A blob an upload brought that nothing uses yet, or one being received now. */
export interface Waiting {
  sha256: string;
  bytes: number;
  /** Unfinished (a partial upload), or whole and waiting for the change that uses it. */
  partial: boolean;
  uploaders: readonly string[];
}

export interface UploadRequest {
  uploader: string;
  sha256: string;
  /** The whole blob's size, when the request declares it (Content-Length or Content-Range). */
  bytes: number | undefined;
}

export type QuotaBound = 'userBytes' | 'userPartials' | 'totalBytes';

export type Admission =
  /** `room`: the most bytes the blob may have; `bound`: the bound that sets it, `used` of `limit`. */
  | { admitted: true; room: number; bound: 'userBytes' | 'totalBytes'; used: number; limit: number }
  | { admitted: false; bound: QuotaBound; used: number; limit: number };

/**
 * Admits the upload when the blob, whole, fits beside what the uploader and everyone have
 * waiting, and the uploader has fewer unfinished uploads than allowed. The blob's own earlier
 * partial is not counted: this upload continues it.
 */
export function admitUpload(
  waiting: Iterable<Waiting>,
  request: UploadRequest,
  limits: QuotaLimits,
): Admission {
  let userBytes = 0;
  let userPartials = 0;
  let totalBytes = 0;
  for (const blob of waiting) {
    if (blob.sha256 === request.sha256) continue;
    totalBytes += blob.bytes;
    if (!blob.uploaders.includes(request.uploader)) continue;
    userBytes += blob.bytes;
    if (blob.partial) userPartials++;
  }
  if (userPartials >= limits.userPartials) {
    return {
      admitted: false,
      bound: 'userPartials',
      used: userPartials,
      limit: limits.userPartials,
    };
  }
  const userRoom = limits.userBytes - userBytes;
  const totalRoom = limits.totalBytes - totalBytes;
  const needed = request.bytes ?? 1;
  if (needed > userRoom) {
    return { admitted: false, bound: 'userBytes', used: userBytes, limit: limits.userBytes };
  }
  if (needed > totalRoom) {
    return { admitted: false, bound: 'totalBytes', used: totalBytes, limit: limits.totalBytes };
  }
  return userRoom <= totalRoom
    ? {
        admitted: true,
        room: userRoom,
        bound: 'userBytes',
        used: userBytes,
        limit: limits.userBytes,
      }
    : {
        admitted: true,
        room: totalRoom,
        bound: 'totalBytes',
        used: totalBytes,
        limit: limits.totalBytes,
      };
}
