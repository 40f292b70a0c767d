import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { type PortfolioDetail, LIMITS } from '../../../shared';
import { describeError } from '../api/api-error';
import { describeFiles } from '../api/portfolio-api';
import { queryKeys } from '../api/query-keys';
import { tooLongMessage } from '../components/character-count';
import { useToast } from '../components/use-toast';

const files = (count: number) => (count === 1 ? 'one file' : `${count} files`);

/** One description for every ticked file, saved in one change of the portfolio. */
export function DescribeSelected({
  detail,
  fileIds,
  onDone,
}: {
  detail: PortfolioDetail;
  fileIds: string[];
  onDone(): void;
}) {
  const queryClient = useQueryClient();
  const toast = useToast();
  const [description, setDescription] = useState('');
  const inputId = useId();
  const hintId = useId();
  const errorId = useId();
  const count = fileIds.length;
  const tooLong = description.length > LIMITS.fileDescription;

  const save = useMutation({
    mutationFn: () => describeFiles(detail.portfolioId, fileIds, description, detail.revision),
    onSuccess: () => {
      toast.success(`The description of ${files(count)} was saved.`);
      setDescription('');
      onDone();
      return queryClient.invalidateQueries({ queryKey: queryKeys.portfolio(detail.portfolioId) });
    },
    onError: (error) => toast.error(`The descriptions were not saved. ${describeError(error)}`),
  });

  return (
    <form
      className="card describe-selected"
      aria-label="Describe several files"
      onSubmit={(event) => {
        event.preventDefault();
        if (count > 0 && !tooLong) save.mutate();
      }}
    >
      <label htmlFor={inputId} className="field-label">
        One description for the selected files
      </label>
      <p id={hintId} className="field-hint">
        {count === 0
          ? 'Tick the files below that should share a description.'
          : `${files(count)} selected.`}
      </p>
      <div className="inline-input">
        <input
          id={inputId}
          value={description}
          onChange={(event) => setDescription(event.target.value)}
          aria-invalid={tooLong ? true : undefined}
          aria-describedby={tooLong ? `${hintId} ${errorId}` : hintId}
        />
        <button
          type="submit"
          className="button button--small button--primary"
          disabled={count === 0 || tooLong || save.isPending}
        >
          {count === 0 ? 'Describe selected files' : `Describe ${files(count)}`}
        </button>
      </div>
      {tooLong && (
        <p className="field-error" id={errorId}>
          {tooLongMessage('A description', description.length, LIMITS.fileDescription)}
        </p>
      )}
    </form>
  );
}
