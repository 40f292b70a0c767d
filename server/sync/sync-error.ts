/**
 * A sync failure a person can act on: a code from the error catalogue and words that say what
 * happened and what to do. Rounds record the last one in the status; the control API answers it.
 */
export type SyncErrorCode =
  | 'HUB_UNREACHABLE'
  | 'HUB_NOT_PORTFOLIO'
  | 'HUB_TOO_OLD'
  | 'HUB_SIGN_IN_FAILED'
  | 'HUB_ERROR'
  | 'SYNC_DEVICE_REVOKED'
  | 'SYNC_REPLICA_ID_TAKEN'
  | 'SYNC_NOT_CONFIGURED'
  | 'SYNC_REJECTED'
  | 'DISK_FULL';

export class SyncError extends Error {
  override readonly name = 'SyncError';
  constructor(
    readonly code: SyncErrorCode,
    message: string,
    /** Worth trying again later by itself (the hub is away or failing), as opposed to needing a person. */
    readonly transient = false,
  ) {
    super(message);
  }
}

/**
 * The hub has no room for more uploads that no change uses yet (its upload quota, 413 or 507):
 * pushing the changes whose files are up makes room. Worth trying again by itself.
 */
export class HubUploadsFull extends SyncError {
  constructor(hubMessage: string | undefined) {
    super(
      'HUB_ERROR',
      `the hub has no room for more uploads now${hubMessage ? `: ${hubMessage}` : ''}`,
      true,
    );
  }
}

/** The hub forgot changes that old (410): the replica starts again from since=0. */
export class ResyncNeeded extends Error {
  override readonly name = 'ResyncNeeded';
}

/** Words for a local I/O failure; a full disk is said as such. */
export function localFailure(error: unknown): SyncError | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOSPC')
    return new SyncError(
      'DISK_FULL',
      'the disk of this computer is full; free some space and sync again',
    );
  return undefined;
}

/**
 * The connection to the hub was cut after the answer had begun (undici's `terminated`, or a
 * socket reset under it): the hub is as unreachable as when it never answered, so the round
 * fails as HUB_UNREACHABLE (offline, backoff), in words, not as an unknown hub error.
 */
export function connectionCut(error: unknown): SyncError | undefined {
  const cause = (error as { cause?: { code?: string } } | undefined)?.cause;
  const cut =
    (error instanceof TypeError && error.message === 'terminated') ||
    ['UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ECONNRESET', 'EPIPE'].includes(cause?.code ?? '');
  if (!cut) return undefined;
  return new SyncError(
    'HUB_UNREACHABLE',
    'the connection to the hub was cut in the middle of an answer; sync will try again',
    true,
  );
}
