import { useState } from 'react';
import type { PortfolioDetail, RevisionSummary } from '../../../shared';
import { describeError } from '../api/api-error';
import { formatDate } from '../lib/format';
import { CompareDialog } from './CompareDialog';
import { changedFieldLabels, commandLabel } from './revision-diff';
import { useRevisions } from './use-revisions';

interface HistoryPanelProps {
  detail: PortfolioDetail;
  /** May this user restore (the same rule as editing the portfolio's category)? */
  canRestore: boolean;
}

/** Who changed what and when, newest first, each past revision one click from a comparison. */
export function HistoryPanel({ detail, canRestore }: HistoryPanelProps) {
  const history = useRevisions(detail.portfolioId, detail.revision);
  const [comparing, setComparing] = useState<RevisionSummary | null>(null);
  const entries = history.data?.pages.flatMap((page) => page.revisions) ?? [];
  const total = history.data?.pages[0]?.total;

  return (
    <section className="card history-panel" aria-labelledby="history-heading">
      <h2 id="history-heading">
        History
        {total !== undefined && (
          <span className="muted history-count">
            {' '}
            · {total} {total === 1 ? 'revision' : 'revisions'}
          </span>
        )}
      </h2>
      {history.isPending ? (
        <div aria-busy="true" aria-label="Loading history">
          <div className="skeleton skeleton-line" />
          <div className="skeleton skeleton-line skeleton-line--short" />
        </div>
      ) : history.isError ? (
        <div role="alert">
          <p className="form-error">
            The history could not be loaded: {describeError(history.error)}
          </p>
          <button
            type="button"
            className="button button--small"
            onClick={() => void history.refetch()}
          >
            Try again
          </button>
        </div>
      ) : (
        <>
          <ol className="history-list">
            {entries.map((entry) => (
              <HistoryEntry
                key={entry.revision}
                entry={entry}
                isCurrent={entry.revision === detail.revision}
                onCompare={() => setComparing(entry)}
              />
            ))}
          </ol>
          {history.hasNextPage && (
            <button
              type="button"
              className="button button--small history-more"
              disabled={history.isFetchingNextPage}
              onClick={() => void history.fetchNextPage()}
            >
              {history.isFetchingNextPage ? 'Loading…' : 'Show more'}
            </button>
          )}
        </>
      )}
      <CompareDialog
        entry={comparing}
        current={detail}
        canRestore={canRestore}
        onClose={() => setComparing(null)}
      />
    </section>
  );
}

function HistoryEntry({
  entry,
  isCurrent,
  onCompare,
}: {
  entry: RevisionSummary;
  isCurrent: boolean;
  onCompare(): void;
}) {
  const changed = entry.command === 'create' ? [] : changedFieldLabels(entry.changedFields);
  return (
    <li className="history-entry">
      <div className="history-text">
        <p className="history-title">
          <span className="history-revision">Revision {entry.revision}</span>
          {isCurrent && <span className="badge badge--ok">Current</span>}
        </p>
        <p className="history-meta">
          {commandLabel(entry.command)} by <strong>{entry.modifiedBy}</strong>
          <br />
          <time dateTime={new Date(entry.modifiedTime).toISOString()}>
            {formatDate(entry.modifiedTime)}
          </time>
        </p>
        {changed.length > 0 && (
          <p className="history-fields">
            <span className="muted">Changed: </span>
            {changed.join(', ')}
          </p>
        )}
      </div>
      {!isCurrent && (
        <button
          type="button"
          className="button button--small"
          onClick={onCompare}
          aria-label={`Compare revision ${entry.revision} with the current version`}
        >
          Compare
        </button>
      )}
    </li>
  );
}
