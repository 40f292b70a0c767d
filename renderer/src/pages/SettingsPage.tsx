import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import {
  LAN_PORT_MAX,
  LAN_PORT_MIN,
  isValidLanPort,
  type DesktopApi,
  type LanStatus,
} from '../../../shared/desktop-bridge';
import { ApiError, describeError } from '../api/api-error';
import { updateUser } from '../api/users-api';
import { TextField } from '../components/TextField';
import { useDocumentTitle } from '../components/use-document-title';
import { useToast } from '../components/use-toast';
import { isAdmin } from '../session/permissions';
import { useUser } from '../session/use-session';
import { storeSessionId } from '../session/session-storage';
import { TeamServerSection } from '../sync/TeamServerSection';
import { BackupsSection } from '../backups/BackupsSection';
import { ShowcaseSection } from '../showcase/ShowcaseSection';

/** Cache keys of what the desktop shell answers (not HTTP data, so not in api/query-keys). */
const desktopKeys = {
  lan: ['desktop', 'lan'] as const,
  server: ['desktop', 'server'] as const,
  versions: ['desktop', 'versions'] as const,
};

const MIN_PASSWORD = 8;

/**
 * Desktop settings: LAN sharing, the owner's password and the data folder. They belong to the
 * desktop shell (window.desktop); in a browser on the LAN there is none, and the page says so.
 */
export function SettingsPage() {
  useDocumentTitle('Settings');
  const desktop = window.desktop;
  const user = useUser();
  return (
    <div className="page settings-page">
      <h1>Settings</h1>
      {/* Any instance, desktop or headless, can sync with a hub; only an admin sets it up. */}
      {isAdmin(user) && <TeamServerSection />}
      {isAdmin(user) && <BackupsSection />}
      {isAdmin(user) && <ShowcaseSection />}
      {desktop ? (
        <>
          <LanSharingSection desktop={desktop} />
          <OwnerPasswordSection desktop={desktop} />
          <DataFolderSection desktop={desktop} />
        </>
      ) : (
        <div className="empty-state">
          <p>
            You are using Portfolio Manager in a web browser. LAN sharing and the owner&rsquo;s
            password are set in the desktop app, on the computer that keeps the data.
          </p>
          <p>Admins manage accounts and reset passwords under Users.</p>
        </div>
      )}
    </div>
  );
}

function errorText(error: unknown): string {
  // IPC errors arrive as "Error invoking remote method '…': Error: <message>"; keep the message.
  if (error instanceof ApiError) return describeError(error);
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^Error invoking remote method '[^']*': (\w*Error: )?/, '');
}

function LanSharingSection({ desktop }: { desktop: DesktopApi }) {
  const status = useQuery({ queryKey: desktopKeys.lan, queryFn: () => desktop.getLanStatus() });
  const warningId = useId();
  return (
    <section className="card" aria-labelledby="lan-heading">
      <h2 id="lan-heading">LAN sharing</h2>
      <p>
        Other computers on your network can open Portfolio Manager in a browser while sharing is on.
        It is off unless you turn it on here, and stays as you leave it.
      </p>
      <p className="notice" id={warningId}>
        Everyone must sign in with an account: set a password for your owner account below, and
        create accounts for others under Users. Traffic is plain HTTP, not encrypted: anyone on the
        same network could read passwords and portfolios on the way, so share only on a network you
        trust.
      </p>
      {status.isPending ? (
        <p aria-busy="true">Loading…</p>
      ) : status.isError ? (
        <p className="form-error" role="alert">
          The sharing status could not be read. {errorText(status.error)}
        </p>
      ) : (
        <LanSharingForm desktop={desktop} initial={status.data} describedBy={warningId} />
      )}
    </section>
  );
}

function LanSharingForm({
  desktop,
  initial,
  describedBy,
}: {
  desktop: DesktopApi;
  initial: LanStatus;
  describedBy: string;
}) {
  const queryClient = useQueryClient();
  const toast = useToast();
  const [enabled, setEnabled] = useState(initial.enabled);
  const [port, setPort] = useState(String(initial.port));
  const [portError, setPortError] = useState<string | undefined>();
  const toggleId = useId();

  const apply = useMutation({
    mutationFn: (request: { enabled: boolean; port: number }) => desktop.setLanSharing(request),
    onSuccess: (next: LanStatus) => {
      queryClient.setQueryData(desktopKeys.lan, next);
      // On failure the form keeps what the user asked for, so they can pick another port.
      if (next.error) return;
      setEnabled(next.enabled);
      setPort(String(next.port));
      toast.success(
        next.listening ? `Sharing on the LAN on port ${next.port}.` : 'LAN sharing is off.',
      );
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    const number = Number(port);
    if (!isValidLanPort(number)) {
      setPortError(`Enter a whole number from ${LAN_PORT_MIN} to ${LAN_PORT_MAX}.`);
      return;
    }
    setPortError(undefined);
    apply.mutate({ enabled, port: number });
  }

  const current = apply.data ?? initial;
  return (
    <>
      <form onSubmit={submit} noValidate aria-describedby={describedBy}>
        <div className="field">
          <label className="field-label" htmlFor={toggleId}>
            <input
              id={toggleId}
              type="checkbox"
              checked={enabled}
              onChange={(event) => setEnabled(event.target.checked)}
            />{' '}
            Share on the LAN
          </label>
        </div>
        <TextField
          label="Port"
          name="lan-port"
          value={port}
          onChange={setPort}
          required
          autoComplete="off"
          hint={`The port other computers connect to, ${LAN_PORT_MIN}–${LAN_PORT_MAX}.`}
          error={portError}
        />
        {(apply.isError || current.error) && (
          <p className="form-error" role="alert">
            {apply.isError ? errorText(apply.error) : current.error}
          </p>
        )}
        <div className="button-row">
          <button type="submit" className="button button--primary" disabled={apply.isPending}>
            {apply.isPending ? 'Applying…' : 'Apply'}
          </button>
        </div>
      </form>
      <LanAddresses status={current} />
    </>
  );
}

function LanAddresses({ status }: { status: LanStatus }) {
  if (!status.listening) {
    return (
      <p role="status" aria-live="polite">
        Not shared: only this computer can reach the app.
      </p>
    );
  }
  return (
    <div role="status" aria-live="polite">
      <p>
        Shared on port {status.port}. From another computer on this network, open one of these
        addresses:
      </p>
      {status.addresses.length > 0 ? (
        <ul aria-label="LAN addresses">
          {status.addresses.map((address) => (
            <li key={`${address.interfaceName}-${address.address}`}>
              <code>{address.url}</code>{' '}
              <span className="field-hint">({address.interfaceName})</span>
            </li>
          ))}
        </ul>
      ) : (
        <p>This computer is not connected to a network right now.</p>
      )}
    </div>
  );
}

function OwnerPasswordSection({ desktop }: { desktop: DesktopApi }) {
  const me = useUser();
  const toast = useToast();
  const server = useQuery({ queryKey: desktopKeys.server, queryFn: () => desktop.getServerInfo() });
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [errors, setErrors] = useState<{ password?: string; repeat?: string }>({});
  const owner = server.data?.ownerUsername;

  const change = useMutation({
    mutationFn: async () => {
      if (!owner) throw new Error('The owner account is not known yet.');
      await updateUser(owner, { password });
      // A new password ends the owner's sessions, this window's too: take the fresh session the
      // shell opens, before the next request would meet a 401.
      const session = await desktop.getSession();
      if (session) storeSessionId(session.sessionId);
    },
    onSuccess: () => {
      setPassword('');
      setRepeat('');
      toast.success('The owner password is set. Use it to sign in from other computers.');
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    const next: typeof errors = {};
    if (password.length < MIN_PASSWORD) next.password = `Use at least ${MIN_PASSWORD} characters.`;
    else if (repeat !== password) next.repeat = 'The two passwords differ.';
    setErrors(next);
    if (!next.password && !next.repeat) change.mutate();
  }

  return (
    <section className="card" aria-labelledby="owner-heading">
      <h2 id="owner-heading">Owner password</h2>
      {!owner ? (
        <p>{server.isError ? errorText(server.error) : 'Loading…'}</p>
      ) : me.username !== owner ? (
        <p>
          The owner account is <strong>{owner}</strong>. Sign in as {owner} (or ask an admin under
          Users) to change its password.
        </p>
      ) : (
        <>
          <p>
            On this computer the app signs you in as <strong>{owner}</strong> without a password. To
            sign in from another computer while sharing on the LAN, set one here.
          </p>
          <form onSubmit={submit} noValidate>
            <TextField
              label="New password"
              name="owner-password"
              type="password"
              value={password}
              onChange={setPassword}
              required
              autoComplete="new-password"
              hint={`At least ${MIN_PASSWORD} characters.`}
              error={errors.password}
            />
            <TextField
              label="Repeat the password"
              name="owner-password-repeat"
              type="password"
              value={repeat}
              onChange={setRepeat}
              required
              autoComplete="new-password"
              error={errors.repeat}
            />
            {change.isError && (
              <p className="form-error" role="alert">
                {errorText(change.error)}
              </p>
            )}
            <div className="button-row">
              <button type="submit" className="button button--primary" disabled={change.isPending}>
                Set password
              </button>
            </div>
          </form>
        </>
      )}
    </section>
  );
}

function DataFolderSection({ desktop }: { desktop: DesktopApi }) {
  const toast = useToast();
  const server = useQuery({ queryKey: desktopKeys.server, queryFn: () => desktop.getServerInfo() });
  const versions = useQuery({
    queryKey: desktopKeys.versions,
    queryFn: () => desktop.getVersions(),
  });
  const open = useMutation({
    mutationFn: () => desktop.openDataFolder(),
    onError: (error) => toast.error(errorText(error)),
  });
  return (
    <section className="card" aria-labelledby="data-heading">
      <h2 id="data-heading">Data folder</h2>
      <p>
        Portfolios and their files are kept in <code>{server.data?.dataDir ?? '…'}</code>. Backups
        are made while the app runs (see Backups above).
      </p>
      <div className="button-row">
        <button type="button" className="button" onClick={() => open.mutate()}>
          Open data folder
        </button>
      </div>
      {versions.data && (
        <p className="field-hint">
          Portfolio Manager {versions.data.app} · Electron {versions.data.electron} · Chromium{' '}
          {versions.data.chrome} · Node.js {versions.data.node}
        </p>
      )}
    </section>
  );
}
