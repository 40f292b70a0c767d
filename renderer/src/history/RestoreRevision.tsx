import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { PortfolioDetail } from '../../../shared';
import { ApiError, describeError } from '../api/api-error';
import { restoreRevision } from '../api/history-api';
import { queryKeys } from '../api/query-keys';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { useToast } from '../components/use-toast';

interface RestoreRevisionProps {
  revision: number;
  current: PortfolioDetail;
  disabled?: boolean;
  onRestored(): void;
}

type Step = 'idle' | 'confirm' | 'conflict';

/**
 * Restore, asked first, and conditional on the revision the user compared against: if someone
 * changed the portfolio meanwhile, nothing is restored and the user may reload and look again.
 */
export function RestoreRevision({ revision, current, disabled, onRestored }: RestoreRevisionProps) {
  const [step, setStep] = useState<Step>('idle');
  const queryClient = useQueryClient();
  const toast = useToast();
  const refresh = () => queryClient.invalidateQueries({ queryKey: queryKeys.portfolios });

  const restore = useMutation({
    mutationFn: () => restoreRevision(current.portfolioId, revision, current.revision),
    onSuccess: async (restored) => {
      setStep('idle');
      await refresh();
      toast.success(`Revision ${revision} was restored as revision ${restored.revision}.`);
      onRestored();
    },
    onError: (error) => {
      if (error instanceof ApiError && error.status === 409) {
        setStep('conflict');
      } else {
        setStep('idle');
        toast.error(`Revision ${revision} was not restored: ${describeError(error)}`);
      }
    },
  });

  // Reloading keeps the comparison open, now against the newest version.
  const reload = useMutation({
    mutationFn: refresh,
    onSettled: () => setStep('idle'),
  });

  return (
    <>
      <button
        type="button"
        className="button button--primary"
        disabled={disabled}
        onClick={() => setStep('confirm')}
      >
        Restore revision {revision}
      </button>
      <ConfirmDialog
        open={step === 'confirm'}
        title={`Restore revision ${revision}?`}
        confirmLabel={`Restore revision ${revision}`}
        busy={restore.isPending}
        onConfirm={() => restore.mutate()}
        onCancel={() => setStep('idle')}
      >
        <p>
          The portfolio gets a new revision, {current.revision + 1}, with the fields and files of
          revision {revision}. Nothing is lost: revision {current.revision} stays in the history.
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        open={step === 'conflict'}
        title="Someone else changed this portfolio"
        confirmLabel="Reload"
        busy={reload.isPending}
        onConfirm={() => reload.mutate()}
        onCancel={() => setStep('idle')}
      >
        <p role="alert">
          It was changed after you opened it, so revision {revision} was not restored. Reload to
          compare against the newest version, then restore again if you still want to.
        </p>
      </ConfirmDialog>
    </>
  );
}
