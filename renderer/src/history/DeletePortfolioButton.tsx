import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import type { PortfolioDetail } from '../../../shared';
import { ApiError, describeError } from '../api/api-error';
import { deletePortfolio } from '../api/history-api';
import { queryKeys } from '../api/query-keys';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { useToast } from '../components/use-toast';
import { paths } from '../paths';
import { restoreTrashed } from './use-trash';

/**
 * Delete with a confirmation, then an Undo toast. The delete is conditional on the revision
 * shown, so a portfolio someone changed meanwhile is never thrown away unseen.
 */
export function DeletePortfolioButton({ detail }: { detail: PortfolioDetail }) {
  const [asking, setAsking] = useState(false);
  const queryClient = useQueryClient();
  const toast = useToast();
  const navigate = useNavigate();
  const { portfolioId, projectTitle: title } = detail;

  const undo = () => {
    restoreTrashed(queryClient, portfolioId).then(
      () => {
        toast.success(`“${title}” is back.`);
        // Undo returns to where the delete happened, like the delete never did.
        void navigate(paths.portfolio(portfolioId));
      },
      (error: unknown) => toast.error(`“${title}” could not be restored: ${describeError(error)}`),
    );
  };

  const mutation = useMutation({
    mutationFn: () => deletePortfolio(portfolioId, detail.revision),
    onSuccess: async () => {
      setAsking(false);
      // Leave first: the detail page would otherwise refetch and show "not found".
      await navigate(paths.gallery());
      queryClient.removeQueries({ queryKey: queryKeys.portfolio(portfolioId) });
      void queryClient.invalidateQueries({ queryKey: queryKeys.portfolios });
      void queryClient.invalidateQueries({ queryKey: queryKeys.trash });
      toast.success(`“${title}” was moved to the Trash.`, { label: 'Undo', run: undo });
    },
    onError: (error) => {
      setAsking(false);
      if (error instanceof ApiError && error.status === 409) {
        toast.error(
          'Someone else changed this portfolio since you opened it, so it was not deleted. It has been reloaded: check it and delete again.',
        );
      } else {
        toast.error(describeError(error));
      }
      void queryClient.invalidateQueries({ queryKey: queryKeys.portfolios });
    },
  });

  return (
    <>
      <button type="button" className="button button--danger" onClick={() => setAsking(true)}>
        Delete
      </button>
      <ConfirmDialog
        open={asking}
        title={`Delete “${title}”?`}
        confirmLabel="Move to Trash"
        danger
        busy={mutation.isPending}
        onConfirm={() => mutation.mutate()}
        onCancel={() => setAsking(false)}
      >
        <p>
          It leaves the gallery and goes to the Trash, with its files and history. Editors and
          admins can restore it from there until it is purged.
        </p>
      </ConfirmDialog>
    </>
  );
}
