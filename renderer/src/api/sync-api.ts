import type {
  Conflict,
  ConflictField,
  ConflictListItem,
  Device,
  ResolveConflictBody,
  SyncConfigBody,
  SyncConfigView,
  SyncRoundSummaryView,
  SyncStatusView,
} from '../../../shared';
import { api, done, ok } from './api-client';

/*
 * Sync (DESIGN §10, docs/API.md "Sync"): the replica's control API (admins), and the hub's devices
 * and conflicts. A replica answers the conflicts API too: conflicts reach it through the feed.
 */

export type SyncStatus = SyncStatusView;
export type SyncState = SyncStatus['state'];
export type SyncConfig = SyncConfigView;
export type SyncRoundSummary = SyncRoundSummaryView;
export type {
  Conflict,
  ConflictField,
  ConflictListItem,
  Device,
  ResolveConflictBody,
  SyncConfigBody,
};

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

export const listPortfolioConflicts = (portfolioId: string, signal?: AbortSignal) =>
  ok(
    api.GET('/api/v1/portfolio/{portfolioId}/conflicts', {
      params: { path: { portfolioId } },
      signal,
    }),
  );
export const resolveConflict = (conflictId: string, body: ResolveConflictBody) =>
  ok(
    api.POST('/api/v1/conflicts/{conflictId}/resolve', { params: { path: { conflictId } }, body }),
  );

const CONFLICT_PAGE_SIZE = 100;

/** Every open conflict of the library: the gallery marks the cards of their portfolios. */
export async function listAllConflicts(signal?: AbortSignal): Promise<ConflictListItem[]> {
  const conflicts: ConflictListItem[] = [];
  let pageToken = '';
  // A bound, so a server that keeps answering a token cannot spin the gallery forever.
  for (let page = 0; page < 50; page++) {
    const answer = await ok(
      api.GET('/api/v1/conflicts', {
        params: { query: { pageSize: CONFLICT_PAGE_SIZE, ...(pageToken ? { pageToken } : {}) } },
        signal,
      }),
    );
    conflicts.push(...answer.conflicts);
    if (!answer.nextPageToken) break;
    pageToken = answer.nextPageToken;
  }
  return conflicts;
}
