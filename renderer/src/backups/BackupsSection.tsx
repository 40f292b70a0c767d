import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { useLocation } from 'react-router';
import { describeError } from '../api/api-error';
import {
  createBackup,
  getBackupSettings,
  listBackups,
  putBackupSettings,
  verifyBackup,
  type Backup,
  type BackupSettings,
} from '../api/backups-api';
import { queryKeys } from '../api/query-keys';
import { TextField } from '../components/TextField';
import { useToast } from '../components/use-toast';
import { formatBytes, formatDate, formatRelativeTime } from '../lib/format';

/** The desktop menu's Backups… opens Settings at this anchor. */
export const BACKUPS_ANCHOR = 'backups';

/** While a backup runs, its progress is read this often. */
const RUNNING_POLL_MS = 1000;

/**
 * Settings → Backups (admins; DESIGN §11): where backups go, how often and how many are kept,
 * the last backup, Back up now with its progress, and Verify.
 */
export function BackupsSection() {
  const heading = useRef<HTMLHeadingElement>(null);
  const location = useLocation();
  // The desktop menu's Backups… opens Settings here: bring the section into view and focus.
  useEffect(() => {
    if (location.hash !== `#${BACKUPS_ANCHOR}`) return;
    heading.current?.scrollIntoView({ block: 'start' });
    heading.current?.focus();
  }, [location.hash]);
  const settings = useQuery({
    queryKey: queryKeys.backupSettings,
    queryFn: ({ signal }) => getBackupSettings(signal),
  });
  return (
    <section className="card" aria-labelledby="backups-heading" id={BACKUPS_ANCHOR}>
      <h2 id="backups-heading" ref={heading} tabIndex={-1}>
        Backups
      </h2>
      <p>
        A backup holds every portfolio with its history and the trash, and every file, as of one
        moment; it is taken while you keep working. Keep the backup folder on another disk. To
        restore one, see &ldquo;Backups and moving your library&rdquo; in the documentation.
      </p>
      <BackupStatus />
      {settings.isPending ? (
        <p aria-busy="true">Loading…</p>
      ) : settings.isError ? (
        <p className="form-error" role="alert">
          The backup settings could not be read. {describeError(settings.error)}
        </p>
      ) : (
        <BackupSettingsForm initial={settings.data} />
      )}
    </section>
  );
}

function BackupStatus() {
  const queryClient = useQueryClient();
  const toast = useToast();
  const backups = useQuery({
    queryKey: queryKeys.backups,
    queryFn: ({ signal }) => listBackups(signal),
    refetchInterval: (query) =>
      query.state.data?.backups.some((backup) => backup.status === 'running')
        ? RUNNING_POLL_MS
        : false,
  });
  const start = useMutation({
    mutationFn: createBackup,
    onSuccess: (answer) => {
      if (answer.status === 'done') toast.success('The backup is complete.');
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: queryKeys.backups }),
  });
  const list = backups.data?.backups ?? [];
  const running = list.find((backup) => backup.status === 'running');
  const last = list.find((backup) => backup.status !== 'running');

  return (
    <div>
      <div role="status" aria-live="polite" aria-label="Backup status">
        {running ? (
          <RunningBackup backup={running} />
        ) : backups.isPending ? (
          <p aria-busy="true">Loading…</p>
        ) : !last ? (
          <p>No backup yet.</p>
        ) : last.status === 'failed' ? (
          <p className="form-error">
            The last backup ({formatRelativeTime(last.createdTime)}) failed: {last.error}
          </p>
        ) : (
          <p>
            Last backup: <strong>{formatDate(last.createdTime)}</strong> (
            {formatRelativeTime(last.createdTime)}), {formatBytes(last.sizeBytes)}, in{' '}
            <code>{last.path}</code>.
          </p>
        )}
      </div>
      {start.isError && (
        <p className="form-error" role="alert">
          {describeError(start.error)}
        </p>
      )}
      <div className="button-row">
        <button
          type="button"
          className="button button--primary"
          disabled={start.isPending || running !== undefined}
          onClick={() => start.mutate()}
        >
          {start.isPending || running ? 'Backing up…' : 'Back up now'}
        </button>
      </div>
      <BackupList backups={list.filter((backup) => backup.status === 'done')} />
    </div>
  );
}

function RunningBackup({ backup }: { backup: Backup }) {
  const progress = backup.progress;
  return (
    <div>
      <p>Backing up (started {formatRelativeTime(backup.createdTime)})…</p>
      {progress && progress.total > 0 && (
        <>
          <progress max={progress.total} value={progress.done} aria-label="Files backed up" />{' '}
          <span className="field-hint">
            {progress.done} of {progress.total} files, {formatBytes(progress.bytes)} copied
          </span>
        </>
      )}
    </div>
  );
}

function BackupList({ backups }: { backups: Backup[] }) {
  if (backups.length === 0) return null;
  return (
    <table className="backup-list" aria-label="Backups">
      <thead>
        <tr>
          <th scope="col">Made</th>
          <th scope="col">Size</th>
          <th scope="col">Check</th>
        </tr>
      </thead>
      <tbody>
        {backups.map((backup) => (
          <tr key={backup.backupId}>
            <td>{formatDate(backup.createdTime)}</td>
            <td>{formatBytes(backup.sizeBytes)}</td>
            <td>
              <VerifyButton backup={backup} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function VerifyButton({ backup }: { backup: Backup }) {
  const verify = useMutation({ mutationFn: () => verifyBackup(backup.backupId) });
  return (
    <span>
      <button
        type="button"
        className="button"
        disabled={verify.isPending}
        onClick={() => verify.mutate()}
        aria-label={`Verify the backup of ${formatDate(backup.createdTime)}`}
      >
        {verify.isPending ? 'Verifying…' : 'Verify'}
      </button>{' '}
      <span role="status" aria-live="polite">
        {verify.isError
          ? describeError(verify.error)
          : verify.data?.whole
            ? `Whole: ${verify.data.files} files checked.`
            : verify.data
              ? `Damaged: ${verify.data.problems.slice(0, 3).join('; ')}`
              : ''}
      </span>
    </span>
  );
}

function BackupSettingsForm({ initial }: { initial: BackupSettings }) {
  const queryClient = useQueryClient();
  const toast = useToast();
  const [target, setTarget] = useState(initial.target);
  const [intervalHours, setIntervalHours] = useState(String(initial.intervalHours));
  const [keep, setKeep] = useState(String(initial.keep));
  const [errors, setErrors] = useState<{ target?: string; interval?: string; keep?: string }>({});
  const save = useMutation({
    mutationFn: putBackupSettings,
    onSuccess: (saved) => {
      queryClient.setQueryData(queryKeys.backupSettings, saved);
      void queryClient.invalidateQueries({ queryKey: queryKeys.backups });
      toast.success('The backup settings are saved.');
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    const next: typeof errors = {};
    if (!target.trim()) next.target = 'Enter the folder backups go to.';
    if (!/^\d+$/.test(intervalHours.trim()) || Number(intervalHours) > 8760)
      next.interval = 'Enter a whole number of hours, 0 to turn the schedule off.';
    if (!/^\d+$/.test(keep.trim()) || Number(keep) < 1 || Number(keep) > 1000)
      next.keep = 'Enter how many backups to keep, 1 or more.';
    setErrors(next);
    if (Object.keys(next).length === 0)
      save.mutate({
        target: target.trim(),
        intervalHours: Number(intervalHours),
        keep: Number(keep),
      });
  }

  return (
    <form onSubmit={submit} noValidate aria-label="Backup settings">
      <TextField
        label="Backup folder"
        name="backup-target"
        value={target}
        onChange={setTarget}
        required
        autoComplete="off"
        hint="A full path on the computer that keeps the data, best on another disk."
        error={errors.target}
      />
      <TextField
        label="Hours between backups"
        name="backup-interval"
        value={intervalHours}
        onChange={setIntervalHours}
        required
        autoComplete="off"
        hint="24 backs up daily; 0 turns the schedule off."
        error={errors.interval}
      />
      <TextField
        label="Backups to keep"
        name="backup-keep"
        value={keep}
        onChange={setKeep}
        required
        autoComplete="off"
        hint="Older backups, and files only they held, are removed."
        error={errors.keep}
      />
      {save.isError && (
        <p className="form-error" role="alert">
          {describeError(save.error)}
        </p>
      )}
      <div className="button-row">
        <button type="submit" className="button" disabled={save.isPending}>
          Save backup settings
        </button>
      </div>
    </form>
  );
}
