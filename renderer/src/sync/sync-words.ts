import { ApiError, describeError } from '../api/api-error';
import type { SyncState, SyncStatus } from '../api/sync-api';
import { formatBytes } from '../lib/format';

/** What each sync error code means to the person at the keyboard, and what they can do. */
const SYNC_ERROR_WORDS = {
  HUB_SIGN_IN_FAILED: 'Wrong username or password on the hub.',
  HUB_UNREACHABLE:
    'The hub cannot be reached. Check the address and that the team server is running; the app tries again by itself.',
  HUB_NOT_PORTFOLIO: 'That address is not a Portfolio Manager server.',
  HUB_TOO_OLD: 'The hub is too old for this app: update the team server first.',
  SYNC_DEVICE_REVOKED: 'This device was signed out of the hub. Sign in again to go on syncing.',
  DEVICE_REVOKED: 'This device was signed out of the hub. Sign in again to go on syncing.',
  SYNC_REPLICA_ID_TAKEN:
    'Another device syncs under this library’s id. Sign in again to give this one its own.',
  HUB_ERROR: 'The hub failed to answer. Sync tries again by itself.',
  SYNC_UNAVAILABLE: 'This storage backend cannot sync with a hub.',
  DISK_FULL: 'The disk is full. Free some space; syncing goes on by itself afterwards.',
  SYNC_NOT_CONFIGURED: 'No team server is set up.',
} as const satisfies Record<string, string>;

const wordsFor = (code: string): string | undefined =>
  (SYNC_ERROR_WORDS as Record<string, string>)[code];

/**
 * The code of a failed call as plain text: the sync codes come from servers that may be newer
 * than the catalogue this renderer was built with.
 */
export function errorCodeOf(error: unknown): string | null {
  return error instanceof ApiError ? (error.code as string | null) : null;
}

/** A disk that is full shows up as ENOSPC in whatever error carried it. */
function isDiskFull(code: string, message: string): boolean {
  return code === 'DISK_FULL' || /ENOSPC|no space left/i.test(message);
}

/** The device token no longer works on the hub: only signing in again helps. */
export const isSignedOut = (code: string | undefined): boolean =>
  code === 'SYNC_DEVICE_REVOKED' || code === 'DEVICE_REVOKED' || code === 'SYNC_REPLICA_ID_TAKEN';

/** Words for a sync error from its code, keeping the server's own message where it adds facts. */
export function syncErrorText(code: string, message: string): string {
  if (isDiskFull(code, message)) return SYNC_ERROR_WORDS.DISK_FULL;
  const words = wordsFor(code);
  if (!words) return message;
  // "hub too old: it speaks sync protocol 1, this app needs 2" says which versions.
  if ((code === 'HUB_TOO_OLD' || code === 'HUB_ERROR') && message) return `${words} (${message})`;
  return words;
}

/** Words for any failed call of the sync API. */
export function describeSyncError(error: unknown): string {
  const code = errorCodeOf(error);
  if (error instanceof ApiError && code) return syncErrorText(code, error.body?.message ?? '');
  if (error instanceof ApiError && error.status === 401 && !error.code)
    return SYNC_ERROR_WORDS.HUB_SIGN_IN_FAILED;
  return describeError(error);
}

export const SYNC_STATE_WORDS: Record<SyncState | 'unset', string> = {
  idle: 'Up to date',
  running: 'Syncing…',
  error: 'Sync failed',
  offline: 'Hub offline',
  unset: 'Not set up',
};

/** "3 changes and 2.0 MB waiting", or nothing when all is sent. */
export function pendingText(pending: SyncStatus['pending']): string {
  if (pending.changes === 0 && pending.bytes === 0) return 'Nothing waiting to be sent.';
  const changes = `${pending.changes} ${pending.changes === 1 ? 'change' : 'changes'}`;
  const bytes = pending.bytes > 0 ? ` and ${formatBytes(pending.bytes)} of files` : '';
  return `${changes}${bytes} waiting to be sent.`;
}
