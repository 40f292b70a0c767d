import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { useLocation } from 'react-router';
import { queryKeys } from '../api/query-keys';
import {
  deleteSyncConfig,
  putSyncConfig,
  runSync,
  type SyncConfig,
  type SyncStatus,
} from '../api/sync-api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { TextField } from '../components/TextField';
import { useToast } from '../components/use-toast';
import { formatBytes, formatDate, formatRelativeTime } from '../lib/format';
import { SETTINGS_POLL, useSyncConfig, useSyncStatus } from './use-sync';
import {
  SYNC_STATE_WORDS,
  describeSyncError,
  isSignedOut,
  pendingText,
  syncErrorText,
} from './sync-words';

export const TEAM_SERVER_ANCHOR = 'team-server';

/**
 * Settings → Team server (admins): sign this instance in to a hub once, then watch and drive
 * sync. The password goes to the server once and is never kept, here or there.
 */
export function TeamServerSection() {
  const config = useSyncConfig();
  const heading = useRef<HTMLHeadingElement>(null);
  const location = useLocation();

  // The app bar's indicator links here: bring the section into view and focus.
  useEffect(() => {
    if (location.hash === `#${TEAM_SERVER_ANCHOR}` && config.isSuccess) {
      heading.current?.scrollIntoView({ block: 'start' });
      heading.current?.focus();
    }
  }, [location.hash, config.isSuccess]);

  return (
    <section className="card" aria-labelledby="team-server-heading" id={TEAM_SERVER_ANCHOR}>
      <h2 id="team-server-heading" ref={heading} tabIndex={-1}>
        Team server
      </h2>
      <p>
        Sync this library with the team&rsquo;s server (the hub): changes made here while offline
        are sent when it can be reached, and changes made there arrive here. Nothing is overwritten
        silently; when the same field was changed on both sides, the portfolio shows both values.
      </p>
      {config.isPending ? (
        <p aria-busy="true">Loading…</p>
      ) : config.isError ? (
        <p className="form-error" role="alert">
          The sync settings could not be read. {describeSyncError(config.error)}
        </p>
      ) : config.data ? (
        <ConfiguredHub config={config.data} />
      ) : (
        <HubSignInForm />
      )}
    </section>
  );
}

/** The one sign-in: hub address, username and password; answered with a device token. */
function HubSignInForm({ previous }: { previous?: SyncConfig }) {
  const queryClient = useQueryClient();
  const toast = useToast();
  const [hubUrl, setHubUrl] = useState(previous?.hubUrl ?? '');
  const [username, setUsername] = useState(previous?.username ?? '');
  const [password, setPassword] = useState('');
  const [errors, setErrors] = useState<{ hubUrl?: string; username?: string; password?: string }>(
    {},
  );

  const signIn = useMutation({
    mutationFn: () => putSyncConfig({ hubUrl: hubUrl.trim(), username: username.trim(), password }),
    // The password is used once; it leaves the form whatever the answer.
    onSettled: () => setPassword(''),
    onSuccess: async (config) => {
      toast.success(`Signed in to ${config.hubUrl} as ${config.username}.`);
      queryClient.setQueryData(queryKeys.syncConfig, config);
      await queryClient.invalidateQueries({ queryKey: queryKeys.syncStatus });
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    const next: typeof errors = {};
    if (!/^https?:\/\/\S+$/i.test(hubUrl.trim()))
      next.hubUrl = 'Enter the hub’s address, starting with http:// or https://.';
    if (!username.trim()) next.username = 'Enter your username on the hub.';
    if (!password) next.password = 'Enter your password on the hub.';
    setErrors(next);
    if (!next.hubUrl && !next.username && !next.password) signIn.mutate();
  }

  return (
    <form onSubmit={submit} noValidate aria-label="Sign in to the team server">
      <TextField
        label="Hub address"
        name="hub-url"
        value={hubUrl}
        onChange={setHubUrl}
        required
        autoComplete="url"
        hint="The address of the team server, e.g. http://team-server:8080."
        error={errors.hubUrl}
      />
      <TextField
        label="Username on the hub"
        name="hub-username"
        value={username}
        onChange={setUsername}
        required
        autoComplete="username"
        error={errors.username}
      />
      <TextField
        label="Password on the hub"
        name="hub-password"
        type="password"
        value={password}
        onChange={setPassword}
        required
        autoComplete="current-password"
        hint="Used once to sign this device in; it is not stored."
        error={errors.password}
      />
      {signIn.isError && (
        <p className="form-error" role="alert">
          {describeSyncError(signIn.error)}
        </p>
      )}
      <div className="button-row">
        <button type="submit" className="button button--primary" disabled={signIn.isPending}>
          {signIn.isPending ? 'Signing in…' : 'Sign in and sync'}
        </button>
      </div>
    </form>
  );
}

function ConfiguredHub({ config }: { config: SyncConfig }) {
  const queryClient = useQueryClient();
  const toast = useToast();
  const status = useSyncStatus(true, SETTINGS_POLL);
  const [confirmingForget, setConfirmingForget] = useState(false);

  const run = useMutation({
    mutationFn: runSync,
    onMutate: () => queryClient.invalidateQueries({ queryKey: queryKeys.syncStatus }),
    onSuccess: (summary) => {
      toast.success(
        `Synced: ${summary.pulled} received, ${summary.pushed} sent` +
          (summary.conflicts ? `, ${summary.conflicts} to resolve.` : '.'),
      );
    },
    onSettled: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: queryKeys.syncStatus }),
        queryClient.invalidateQueries({ queryKey: queryKeys.portfolios }),
      ]),
  });
  const forget = useMutation({
    mutationFn: deleteSyncConfig,
    onSuccess: async () => {
      setConfirmingForget(false);
      toast.success('This library no longer syncs with the hub.');
      queryClient.setQueryData(queryKeys.syncConfig, null);
      await queryClient.invalidateQueries({ queryKey: queryKeys.syncStatus });
    },
    onError: (error) => {
      setConfirmingForget(false);
      toast.error(`The hub was not forgotten. ${describeSyncError(error)}`);
    },
  });

  const revoked = isSignedOut(status.data?.lastError?.code);
  const running = status.data?.state === 'running' || run.isPending;

  return (
    <>
      <dl className="meta-list sync-meta">
        <dt>Hub</dt>
        <dd>
          <code>{config.hubUrl}</code>
        </dd>
        <dt>Signed in as</dt>
        <dd>{config.username}</dd>
      </dl>
      {status.isPending ? (
        <p aria-busy="true">Reading the sync status…</p>
      ) : status.isError ? (
        <p className="form-error" role="alert">
          The sync status could not be read. {describeSyncError(status.error)}
        </p>
      ) : (
        <SyncStatusView status={status.data} />
      )}
      {run.isError && (
        <p className="form-error" role="alert">
          The sync did not finish. {describeSyncError(run.error)}
        </p>
      )}
      {revoked && <HubSignInForm previous={config} />}
      <div className="button-row">
        <button
          type="button"
          className="button button--primary"
          disabled={running || revoked}
          onClick={() => run.mutate()}
        >
          {running ? 'Syncing…' : 'Sync now'}
        </button>
        <button
          type="button"
          className="button button--danger"
          onClick={() => setConfirmingForget(true)}
        >
          Forget this hub
        </button>
      </div>
      <ConfirmDialog
        open={confirmingForget}
        title="Forget this hub?"
        confirmLabel="Forget hub"
        danger
        busy={forget.isPending}
        onConfirm={() => forget.mutate()}
        onCancel={() => setConfirmingForget(false)}
      >
        <p>
          This library stops syncing with <code>{config.hubUrl}</code> and its device token is
          dropped. Portfolios here and on the hub stay as they are; changes not sent yet stay here.
        </p>
      </ConfirmDialog>
    </>
  );
}

/** An error older than the last success is over; it is not shown as if it were still on. */
function isCurrentError(status: SyncStatus): boolean {
  if (!status.lastError) return false;
  return status.lastSuccess === null || status.lastError.time >= status.lastSuccess;
}

/** State in words, last success, what waits, the round's progress and the last error. */
export function SyncStatusView({ status, now }: { status: SyncStatus; now?: number }) {
  const progress = status.state === 'running' ? status.progress : null;
  return (
    <div className="sync-status">
      <p role="status" aria-live="polite">
        <span className={`sync-dot sync-dot--${status.state}`} aria-hidden="true" />{' '}
        <strong>{SYNC_STATE_WORDS[status.state]}</strong>
        {status.state === 'offline' && ' — changes wait here until the hub can be reached.'}
      </p>
      <dl className="meta-list">
        <dt>Last success</dt>
        <dd>
          {status.lastSuccess === null ? (
            'Never'
          ) : (
            <time
              dateTime={new Date(status.lastSuccess).toISOString()}
              title={formatDate(status.lastSuccess)}
            >
              {formatRelativeTime(status.lastSuccess, now)}
            </time>
          )}
        </dd>
        <dt>Waiting</dt>
        <dd>{pendingText(status.pending)}</dd>
        {status.conflicts > 0 && (
          <>
            <dt>Conflicts</dt>
            <dd>
              {status.conflicts} to resolve: the portfolios concerned are marked in the gallery.
            </dd>
          </>
        )}
      </dl>
      {progress && (
        <div className="sync-progress">
          <label htmlFor="sync-progress-bar">
            {progress.done} of {progress.total} records · {formatBytes(progress.bytes)}
          </label>
          <progress
            id="sync-progress-bar"
            max={Math.max(progress.total, 1)}
            value={progress.done}
            aria-valuetext={`${progress.done} of ${progress.total} records, ${formatBytes(progress.bytes)} moved`}
          />
        </div>
      )}
      {status.lastError && isCurrentError(status) && (
        <p className="form-error" role="alert">
          {syncErrorText(status.lastError.code, status.lastError.message)}{' '}
          <span className="muted">({formatRelativeTime(status.lastError.time, now)})</span>
        </p>
      )}
    </div>
  );
}
