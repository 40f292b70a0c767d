import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { Command, PortfolioDetail, UpdatePortfolioBody } from '../../../shared';
import { ApiError, describeError } from '../api/api-error';
import { runCommand } from '../api/portfolio-api';
import { queryKeys } from '../api/query-keys';
import { useToast } from '../components/use-toast';

interface Action {
  command: Command;
  extra?: Partial<UpdatePortfolioBody>;
  done: string;
}

/** Admin-only state changes, each one PUT with a command and the revision shown. */
export function AdminActions({ detail }: { detail: PortfolioDetail }) {
  const queryClient = useQueryClient();
  const toast = useToast();
  const mutation = useMutation({
    mutationFn: (action: Action) => runCommand(detail, action.command, action.extra),
    onSuccess: (_, action) => toast.success(action.done),
    onError: (error) => {
      setStaffPick(detail.staffPick);
      if (error instanceof ApiError && error.code === 'REVISION_CONFLICT') {
        toast.error(
          'Someone else changed this portfolio just now. It has been reloaded; try again.',
        );
      } else {
        toast.error(describeError(error));
      }
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: queryKeys.portfolios }),
  });

  const run = (action: Action) => mutation.mutate(action);
  // The switch moves at once (a controlled checkbox would otherwise snap back until the
  // server answers) and follows the server's value whenever that changes.
  const [staffPick, setStaffPick] = useState(detail.staffPick);
  const [serverStaffPick, setServerStaffPick] = useState(detail.staffPick);
  if (serverStaffPick !== detail.staffPick) {
    setServerStaffPick(detail.staffPick);
    setStaffPick(detail.staffPick);
  }
  const busy = mutation.isPending;

  return (
    <section className="admin-actions card" aria-labelledby="admin-actions-heading">
      <h2 id="admin-actions-heading">Admin</h2>
      <div className="button-row">
        {detail.published ? (
          <button
            type="button"
            className="button"
            disabled={busy}
            onClick={() => run({ command: 'unpublish', done: 'Unpublished.' })}
          >
            Unpublish
          </button>
        ) : (
          <button
            type="button"
            className="button button--primary"
            disabled={busy}
            onClick={() => run({ command: 'publish', done: 'Published.' })}
          >
            Publish
          </button>
        )}
        {detail.active ? (
          <button
            type="button"
            className="button"
            disabled={busy}
            onClick={() => run({ command: 'deactivate', done: 'Deactivated.' })}
          >
            Deactivate
          </button>
        ) : (
          <button
            type="button"
            className="button"
            disabled={busy}
            onClick={() => run({ command: 'activate', done: 'Activated.' })}
          >
            Activate
          </button>
        )}
        <label className="switch">
          <input
            type="checkbox"
            checked={staffPick}
            disabled={busy}
            onChange={(event) => {
              setStaffPick(event.target.checked);
              run({
                command: 'save',
                extra: { staffPick: event.target.checked },
                done: event.target.checked ? 'Marked as a staff pick.' : 'No longer a staff pick.',
              });
            }}
          />
          <span>Staff pick</span>
        </label>
      </div>
    </section>
  );
}
