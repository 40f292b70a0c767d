import { useQuery } from '@tanstack/react-query';
import { queryKeys } from '../api/query-keys';
import { getSyncConfig, getSyncStatus, type SyncConfig, type SyncStatus } from '../api/sync-api';

/** The hub this instance syncs with, or null when none is set up. */
export function useSyncConfig(enabled = true) {
  return useQuery({
    queryKey: queryKeys.syncConfig,
    queryFn: async ({ signal }): Promise<SyncConfig | null> => {
      const state = await getSyncConfig(signal);
      return state.configured ? state : null;
    },
    enabled,
  });
}

/** How often to ask while a round runs (the progress bar moves) and while it does not. */
export interface PollIntervals {
  running: number;
  resting: number;
}

export const SETTINGS_POLL: PollIntervals = { running: 1000, resting: 5000 };
export const APP_BAR_POLL: PollIntervals = { running: 2000, resting: 30_000 };

/** The sync status, polled; every observer shares one query, the fastest interval wins. */
export function useSyncStatus(enabled: boolean, poll: PollIntervals) {
  return useQuery({
    queryKey: queryKeys.syncStatus,
    queryFn: ({ signal }): Promise<SyncStatus> => getSyncStatus(signal),
    enabled,
    refetchInterval: (query) =>
      query.state.data?.state === 'running' ? poll.running : poll.resting,
  });
}
