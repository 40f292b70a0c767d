import { useRef, useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { describeError } from '../api/api-error';
import type { TrashItem } from '../../../shared';
import { purgeFromTrash } from '../api/history-api';
import { queryKeys } from '../api/query-keys';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { useDocumentTitle } from '../components/use-document-title';
import { useToast } from '../components/use-toast';
import { restoreTrashed, useTrash } from '../history/use-trash';
import { formatDate } from '../lib/format';
import { paths } from '../paths';
import { canEditCategory, isAdmin, isStaff } from '../session/permissions';
import { useUser } from '../session/use-session';

/** Deleted portfolios, newest first, each one click from coming back. */
export function TrashPage() {
  useDocumentTitle('Trash');
  const user = useUser();
  const staff = isStaff(user);
  const trash = useTrash(staff);
  const headingRef = useRef<HTMLHeadingElement>(null);

  if (!staff) {
    return (
      <div className="page">
        <h1>Trash</h1>
        <p className="empty-state">Only editors and admins can see the Trash.</p>
      </div>
    );
  }

  const items = trash.data?.pages.flatMap((page) => page.lists) ?? [];
  const total = trash.data?.pages[0]?.total ?? 0;

  return (
    <div className="page trash-page">
      <div className="page-heading">
        <h1 ref={headingRef} tabIndex={-1}>
          Trash
        </h1>
        {trash.isSuccess && total > 0 && (
          <p className="result-count" role="status">
            {total} deleted {total === 1 ? 'portfolio' : 'portfolios'}
          </p>
        )}
      </div>
      <p className="muted trash-intro">
        Deleted portfolios wait here with their files and history until the date shown beside each,
        then are deleted for good.
      </p>
      {trash.isPending ? (
        <div aria-busy="true" aria-label="Loading the Trash">
          <div className="skeleton skeleton-row" />
          <div className="skeleton skeleton-row" />
        </div>
      ) : trash.isError ? (
        <div className="empty-state" role="alert">
          <h2>The Trash could not be loaded</h2>
          <p>{describeError(trash.error)}</p>
          <button type="button" className="button" onClick={() => void trash.refetch()}>
            Try again
          </button>
        </div>
      ) : items.length === 0 ? (
        <div className="empty-state">
          <h2>The Trash is empty</h2>
          <p>When a portfolio is deleted, it waits here so it can be restored.</p>
        </div>
      ) : (
        <>
          <ul className="trash-list" aria-label="Deleted portfolios">
            {items.map((item) => (
              <TrashRow
                key={item.portfolioId}
                item={item}
                // The row and its buttons are gone: keep the keyboard on this page.
                onRemoved={() => headingRef.current?.focus()}
              />
            ))}
          </ul>
          {trash.hasNextPage && (
            <div className="grid-footer">
              <button
                type="button"
                className="button"
                disabled={trash.isFetchingNextPage}
                onClick={() => void trash.fetchNextPage()}
              >
                {trash.isFetchingNextPage ? 'Loading…' : 'Show more'}
              </button>
            </div>
          )}
        </>
      )}
    </div>
  );
}

function TrashRow({ item, onRemoved }: { item: TrashItem; onRemoved(): void }) {
  const user = useUser();
  const queryClient = useQueryClient();
  const toast = useToast();
  const navigate = useNavigate();
  const [confirmingPurge, setConfirmingPurge] = useState(false);
  const title = item.projectTitle;

  const restore = useMutation({
    mutationFn: () => restoreTrashed(queryClient, item.portfolioId),
    onSuccess: () => {
      onRemoved();
      toast.success(`“${title}” was restored.`, {
        label: 'Open',
        run: () => void navigate(paths.portfolio(item.portfolioId)),
      });
    },
    onError: (error) => toast.error(`“${title}” could not be restored: ${describeError(error)}`),
  });

  const purge = useMutation({
    mutationFn: () => purgeFromTrash(item.portfolioId),
    onSuccess: async () => {
      setConfirmingPurge(false);
      await queryClient.invalidateQueries({ queryKey: queryKeys.trash });
      onRemoved();
      toast.success(`“${title}” was deleted for good.`);
    },
    onError: (error) => {
      setConfirmingPurge(false);
      toast.error(`“${title}” could not be deleted: ${describeError(error)}`);
    },
  });

  const busy = restore.isPending || purge.isPending;
  return (
    <li className="trash-row card">
      <div className="trash-text">
        <p className="trash-title">{title}</p>
        <p className="muted">
          {item.category} · deleted{' '}
          <time dateTime={new Date(item.deletedTime).toISOString()}>
            {formatDate(item.deletedTime)}
          </time>{' '}
          by {item.deletedBy} · revision {item.revision}
        </p>
        <p className="muted">
          Deleted for good on{' '}
          <time dateTime={new Date(item.purgeTime).toISOString()}>
            {formatDate(item.purgeTime)}
          </time>{' '}
          unless restored
        </p>
      </div>
      <div className="button-row">
        {canEditCategory(user, item.category) ? (
          <button
            type="button"
            className="button button--primary"
            disabled={busy}
            onClick={() => restore.mutate()}
          >
            {restore.isPending ? 'Restoring…' : 'Restore'}
            <span className="visually-hidden"> {title}</span>
          </button>
        ) : (
          <span className="muted">Not in your categories</span>
        )}
        {isAdmin(user) && (
          <button
            type="button"
            className="button button--danger"
            disabled={busy}
            onClick={() => setConfirmingPurge(true)}
          >
            Delete for good<span className="visually-hidden"> {title}</span>
          </button>
        )}
      </div>
      <ConfirmDialog
        open={confirmingPurge}
        title={`Delete “${title}” for good?`}
        confirmLabel="Delete for good"
        danger
        busy={purge.isPending}
        onConfirm={() => purge.mutate()}
        onCancel={() => setConfirmingPurge(false)}
      >
        <p>
          It is removed with its whole history, and its files once no other portfolio uses them.
          This cannot be undone.
        </p>
      </ConfirmDialog>
    </li>
  );
}
