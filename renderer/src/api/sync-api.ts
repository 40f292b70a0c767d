import type {
  Device,
  SyncConfigBody,
  SyncConfigView,
  SyncRoundSummaryView,
  SyncStatusView,
} from '../../../shared';
import { NetworkError } from './api-error';
import { api, authHeaders, done, errorFromResponse, ok } from './api-client';

/*
 * Sync (DESIGN §10, docs/API.md "Sync"): the replica's control API (admin) and the hub's devices
 * through the typed client; conflicts through fetch with the session header, ending in the same
 * ApiError, until their operations are in the generated client.
 */

export type SyncStatus = SyncStatusView;
export type SyncState = SyncStatus['state'];
export type SyncError = NonNullable<SyncStatus['lastError']>;
export type SyncConfig = SyncConfigView;
export type SyncRoundSummary = SyncRoundSummaryView;
export type { SyncConfigBody };

export type { Device };

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
  ok(api.GET('/api/v1/sync/config', { signal }));
export const putSyncConfig = (body: SyncConfigBody) => ok(api.PUT('/api/v1/sync/config', { body }));
export const deleteSyncConfig = () => done(api.DELETE('/api/v1/sync/config'));
export const getSyncStatus = (signal?: AbortSignal) =>
  ok(api.GET('/api/v1/sync/status', { signal }));
export const runSync = () => ok(api.POST('/api/v1/sync/run'));

export const listDevices = (username: string, signal?: AbortSignal) =>
  ok(api.GET('/api/v1/devices', { params: { query: { username } }, signal }));
export const signOutDevice = (deviceId: string) =>
  done(api.DELETE('/api/v1/devices/{deviceId}', { params: { path: { deviceId } } }));

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
