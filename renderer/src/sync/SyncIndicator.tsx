import { Link } from 'react-router';
import type { SyncStatus } from '../api/sync-api';
import { formatRelativeTime } from '../lib/format';
import { paths } from '../paths';
import { SYNC_STATE_WORDS } from './sync-words';
import { TEAM_SERVER_ANCHOR } from './TeamServerSection';
import { APP_BAR_POLL, useSyncConfig, useSyncStatus } from './use-sync';

/** The app bar's sync light for admins: state at a glance, one click to the Team server settings. */
export function SyncIndicator() {
  const config = useSyncConfig();
  const configured = config.data != null;
  const status = useSyncStatus(configured, APP_BAR_POLL);
  // A server without the sync API (or a failed read) shows nothing rather than a false state.
  if (config.isPending || config.isError) return null;
  return <SyncIndicatorView status={configured ? (status.data ?? null) : 'unset'} />;
}

export function SyncIndicatorView({ status }: { status: SyncStatus | 'unset' | null }) {
  const state = status === 'unset' ? 'unset' : (status?.state ?? 'idle');
  const words = status === null ? 'Checking…' : SYNC_STATE_WORDS[state];
  const lastSuccess =
    typeof status === 'object' && status?.lastSuccess
      ? `, last synced ${formatRelativeTime(status.lastSuccess)}`
      : '';
  const conflicts =
    typeof status === 'object' && status && status.conflicts > 0
      ? `, ${status.conflicts} ${status.conflicts === 1 ? 'conflict' : 'conflicts'} to resolve`
      : '';
  return (
    <Link
      to={`${paths.settings()}#${TEAM_SERVER_ANCHOR}`}
      className={`sync-indicator sync-indicator--${state}`}
      aria-label={`Sync: ${words}${lastSuccess}${conflicts}. Team server settings`}
      title={`Sync: ${words}${lastSuccess}${conflicts}`}
    >
      <span className={`sync-dot sync-dot--${state}`} aria-hidden="true" />
      <span className="sync-indicator-text">
        {words}
        {typeof status === 'object' && status && status.conflicts > 0 && (
          <span className="sync-indicator-conflicts"> · {status.conflicts} to resolve</span>
        )}
      </span>
    </Link>
  );
}
