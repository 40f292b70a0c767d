import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { describeError } from '../api/api-error';
import { queryKeys } from '../api/query-keys';
import { createShare, listShares, revokeShare, shareLink, type Share } from '../api/shares-api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { useToast } from '../components/use-toast';
import { formatDate } from '../lib/format';

const DAY = 86_400_000;

/** `YYYY-MM-DD` of a time, in the user's own time zone (what a date input shows). */
function dateInputValue(time: number): string {
  const date = new Date(time);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** The end of the chosen day, local time: a link "until 3 May" works all of 3 May. */
function endOfDay(value: string): number {
  const [year, month, day] = value.split('-').map(Number);
  return new Date(year!, month! - 1, day!, 23, 59, 59, 999).getTime();
}

function stateWords(share: Share): string {
  if (share.state === 'expired') return 'Expired';
  if (share.state === 'usedUp') return 'Used up';
  return 'Active';
}

/**
 * Share links of the portfolio (DESIGN §15), for who may change it: the links not revoked with
 * their expiry, uses and password, each revocable, and a form that makes one and shows its link
 * once, with a Copy button.
 */
export function SharePanel({ portfolioId, title }: { portfolioId: string; title: string }) {
  const shares = useQuery({
    queryKey: queryKeys.shares(portfolioId),
    queryFn: ({ signal }) => listShares(portfolioId, signal),
  });
  const [created, setCreated] = useState<string | null>(null);

  return (
    <section className="share-panel" aria-labelledby="share-heading">
      <h2 id="share-heading">Share links</h2>
      <p className="muted">
        Anyone with a link sees this portfolio, read-only, even while it is not published: its
        title, texts, cover and drafting images, never the member barcode or documents.
      </p>
      {shares.isPending ? (
        <p className="muted" aria-busy="true">
          Loading…
        </p>
      ) : shares.isError ? (
        <p className="form-error" role="alert">
          The share links could not be loaded. {describeError(shares.error)}
        </p>
      ) : shares.data.length === 0 ? (
        <p className="muted">No share links yet.</p>
      ) : (
        <ul className="share-list">
          {shares.data.map((share) => (
            <ShareRow key={share.shareId} portfolioId={portfolioId} share={share} />
          ))}
        </ul>
      )}
      {created && <NewLink url={created} onDone={() => setCreated(null)} />}
      <NewShareForm portfolioId={portfolioId} title={title} onCreated={setCreated} />
    </section>
  );
}

function ShareRow({ portfolioId, share }: { portfolioId: string; share: Share }) {
  const queryClient = useQueryClient();
  const toast = useToast();
  const [confirming, setConfirming] = useState(false);
  const revoke = useMutation({
    mutationFn: () => revokeShare(portfolioId, share.shareId),
    onSuccess: async () => {
      setConfirming(false);
      toast.success('The link was revoked. It no longer opens the portfolio.');
      await queryClient.invalidateQueries({ queryKey: queryKeys.shares(portfolioId) });
    },
    onError: (error) => {
      setConfirming(false);
      toast.error(`The link was not revoked. ${describeError(error)}`);
    },
  });
  const uses =
    share.maxUses === null ? `${share.uses} uses` : `${share.uses} of ${share.maxUses} uses`;
  const summary = `Link made ${formatDate(share.createdTime)}, ${
    share.state === 'expired' ? 'expired' : 'expires'
  } ${formatDate(share.expiresAt)}`;

  return (
    <li className="share-row">
      <div>
        <span className="share-summary">{summary}</span>
        <p className="muted">
          {stateWords(share)} · {uses} · {share.hasPassword ? 'Password' : 'No password'}
        </p>
      </div>
      <button
        type="button"
        className="button button--small button--danger"
        onClick={() => setConfirming(true)}
        aria-label={`Revoke the ${summary.toLowerCase()}`}
      >
        Revoke
      </button>
      <ConfirmDialog
        open={confirming}
        title="Revoke this link?"
        confirmLabel="Revoke link"
        danger
        busy={revoke.isPending}
        onConfirm={() => revoke.mutate()}
        onCancel={() => setConfirming(false)}
      >
        <p>Whoever has it can no longer open the portfolio. This cannot be undone.</p>
      </ConfirmDialog>
    </li>
  );
}

function NewLink({ url, onDone }: { url: string; onDone(): void }) {
  const toast = useToast();
  const link = shareLink(url);
  const id = useId();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(link);
      toast.success('The link was copied.');
    } catch {
      toast.error('The link could not be copied; select it and copy it yourself.');
    }
  };
  return (
    <div className="share-new-link" role="status">
      <label htmlFor={id}>New link — copy it now, it is shown only once</label>
      <div className="share-new-link-row">
        <input id={id} className="mono" readOnly value={link} onFocus={(e) => e.target.select()} />
        <button type="button" className="button button--primary" onClick={() => void copy()}>
          Copy
        </button>
        <button type="button" className="button" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}

function NewShareForm({
  portfolioId,
  title,
  onCreated,
}: {
  portfolioId: string;
  title: string;
  onCreated(url: string): void;
}) {
  const queryClient = useQueryClient();
  const id = useId();
  const [today] = useState(() => dateInputValue(Date.now()));
  const [expires, setExpires] = useState(() => dateInputValue(Date.now() + 7 * DAY));
  const [password, setPassword] = useState('');
  const [maxUses, setMaxUses] = useState('');
  const [error, setError] = useState<string | null>(null);
  const make = useMutation({
    mutationFn: () =>
      createShare(portfolioId, {
        expiresAt: endOfDay(expires),
        ...(password ? { password } : {}),
        ...(maxUses ? { maxUses: Number(maxUses) } : {}),
      }),
    onSuccess: async (share) => {
      setError(null);
      setPassword('');
      setMaxUses('');
      onCreated(share.url);
      await queryClient.invalidateQueries({ queryKey: queryKeys.shares(portfolioId) });
    },
    onError: (failure) => setError(`The link was not made. ${describeError(failure)}`),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!expires) return setError('Choose the last day the link works.');
    if (endOfDay(expires) <= Date.now()) return setError('The last day must be today or later.');
    make.mutate();
  };

  return (
    <form className="share-form" onSubmit={submit} aria-label={`Make a share link for ${title}`}>
      <h3>Make a link</h3>
      <div className="share-form-fields">
        <label htmlFor={`${id}-expires`}>
          Works until (end of day)
          <input
            id={`${id}-expires`}
            type="date"
            required
            min={today}
            value={expires}
            onChange={(e) => setExpires(e.target.value)}
          />
        </label>
        <label htmlFor={`${id}-password`}>
          Password (optional)
          <input
            id={`${id}-password`}
            type="password"
            autoComplete="new-password"
            minLength={4}
            maxLength={200}
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        <label htmlFor={`${id}-uses`}>
          Most opens (optional)
          <input
            id={`${id}-uses`}
            type="number"
            inputMode="numeric"
            min={1}
            step={1}
            value={maxUses}
            onChange={(e) => setMaxUses(e.target.value)}
          />
        </label>
      </div>
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" className="button button--primary" disabled={make.isPending}>
        {make.isPending ? 'Making the link…' : 'Make link'}
      </button>
    </form>
  );
}
