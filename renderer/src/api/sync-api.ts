import { NetworkError } from './api-error';
import { authHeaders, errorFromResponse } from './api-client';

/*
 * Sync: the replica's control API (admin), the hub's devices and conflicts (DESIGN §10, the shapes
 * pinned in docs/API.md "Sync"). The calls go through fetch with the session header and end in
 * the same ApiError as the typed client.
 */

export type SyncState = 'idle' | 'running' | 'error' | 'offline';

export interface SyncError {
  code: string;
  message: string;
  time: number;
}

export interface SyncStatus {
  state: SyncState;
  /** When the last round ended well (ms since the epoch), null before the first. */
  lastSuccess: number | null;
  lastError: SyncError | null;
  pending: { changes: number; blobs: number; bytes: number };
  /** The round under way: records done of total, and bytes moved so far. */
  progress: { done: number; total: number; bytes: number } | null;
  /** Open conflicts on this replica. */
  conflicts: number;
}

export interface SyncConfig {
  hubUrl: string;
  username: string;
  deviceId: string;
  replicaId: string;
}

export interface SyncConfigBody {
  hubUrl: string;
  username: string;
  password: string;
}

export interface SyncRoundSummary {
  pulled: number;
  pushed: number;
  conflicts: number;
  blobsUp: number;
  blobsDown: number;
  bytesUp: number;
  bytesDown: number;
  durationMs: number;
}

export interface Device {
  deviceId: string;
  name: string;
  replicaId: string;
  username: string;
  createdDate: number;
  lastSeen: number | null;
}

/** Both sides of one field a conflict holds: the base they started from, the kept value, the other. */
export interface ConflictField {
  base?: unknown;
  current?: unknown;
  theirs?: unknown;
}

export interface Conflict {
  conflictId: string;
  portfolioId: string;
  kind: 'field' | 'delete';
  createdTime: number;
  by: string;
  replicaId: string;
  mutationId: string;
  baseRevision: number;
  fields: Record<string, ConflictField>;
  /** What happened, in words. */
  note: string;
  /** Only in the library-wide list. */
  projectTitle?: string;
}

export interface ConflictList {
  conflicts: Conflict[];
  total: number;
  nextPageToken: string;
}

export interface ResolveConflictBody {
  keep: 'current' | 'theirs';
  /** Edited values that override both sides. */
  fields?: Record<string, unknown>;
  /** Resolve only while the portfolio is still at this revision (409 otherwise). */
  revision?: number;
}

async function call<T>(method: string, url: string, body?: unknown, signal?: AbortSignal) {
  let response: Response;
  try {
    response = await fetch(new URL(url, globalThis.location?.origin), {
      method,
      signal,
      credentials: 'same-origin',
      headers: {
        Accept: 'application/json',
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...authHeaders(),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new NetworkError(error);
  }
  if (!response.ok) throw await errorFromResponse(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

const encode = encodeURIComponent;

export const getSyncConfig = (signal?: AbortSignal) =>
  call<SyncConfig>('GET', '/api/v1/sync/config', undefined, signal);
export const putSyncConfig = (body: SyncConfigBody) =>
  call<SyncConfig>('PUT', '/api/v1/sync/config', body);
export const deleteSyncConfig = () => call<void>('DELETE', '/api/v1/sync/config');
export const getSyncStatus = (signal?: AbortSignal) =>
  call<SyncStatus>('GET', '/api/v1/sync/status', undefined, signal);
export const runSync = () => call<SyncRoundSummary>('POST', '/api/v1/sync/run');

export const listDevices = (username: string, signal?: AbortSignal) =>
  call<{ devices: Device[] }>(
    'GET',
    `/api/v1/devices?username=${encode(username)}`,
    undefined,
    signal,
  );
export const signOutDevice = (deviceId: string) =>
  call<void>('DELETE', `/api/v1/devices/${encode(deviceId)}`);

export const listConflicts = (pageToken: string, signal?: AbortSignal) =>
  call<ConflictList>(
    'GET',
    `/api/v1/conflicts?pageSize=100${pageToken ? `&pageToken=${encode(pageToken)}` : ''}`,
    undefined,
    signal,
  );
export const listPortfolioConflicts = (portfolioId: string, signal?: AbortSignal) =>
  call<{ conflicts: Conflict[] }>(
    'GET',
    `/api/v1/portfolio/${encode(portfolioId)}/conflicts`,
    undefined,
    signal,
  );
export const resolveConflict = (conflictId: string, body: ResolveConflictBody) =>
  call<{ revision: number }>('POST', `/api/v1/conflicts/${encode(conflictId)}/resolve`, body);

/** Every open conflict of the library: the gallery marks the cards of their portfolios. */
export async function listAllConflicts(signal?: AbortSignal): Promise<Conflict[]> {
  const conflicts: Conflict[] = [];
  let pageToken = '';
  // A bound, so a server that keeps answering a token cannot spin the gallery forever.
  for (let page = 0; page < 50; page++) {
    const answer = await listConflicts(pageToken, signal);
    conflicts.push(...answer.conflicts);
    if (!answer.nextPageToken) break;
    pageToken = answer.nextPageToken;
  }
  return conflicts;
}
