import { useId, useState } from 'react';
import type { PortfolioDetail, RevisionSummary } from '../../../shared';
import { describeError } from '../api/api-error';
import { useModalDialog } from '../components/use-modal-dialog';
import { formatDate } from '../lib/format';
import { RestoreRevision } from './RestoreRevision';
import { RevisionValue } from './RevisionValue';
import { commandLabel, compareRevisions, fileIdsOf } from './revision-diff';
import { useRevision } from './use-revisions';

interface CompareDialogProps {
  /** The revision to compare; the dialog is closed while this is null. */
  entry: RevisionSummary | null;
  current: PortfolioDetail;
  canRestore: boolean;
  onClose(): void;
}

/** A past revision side by side with the current one, the fields that differ marked. */
export function CompareDialog({ entry, current, canRestore, onClose }: CompareDialogProps) {
  const ref = useModalDialog(entry !== null);
  const titleId = useId();

  return (
    <dialog
      ref={ref}
      className="dialog dialog--compare"
      aria-labelledby={titleId}
      onCancel={(event) => {
        // React bubbles `cancel` from the restore dialogs inside this one: Escape there closes
        // only them.
        if (event.target !== event.currentTarget) return;
        event.preventDefault();
        onClose();
      }}
    >
      {entry && (
        <CompareBody
          titleId={titleId}
          entry={entry}
          current={current}
          canRestore={canRestore}
          onClose={onClose}
        />
      )}
    </dialog>
  );
}

function CompareBody({
  titleId,
  entry,
  current,
  canRestore,
  onClose,
}: CompareDialogProps & { titleId: string; entry: RevisionSummary }) {
  const [onlyDifferences, setOnlyDifferences] = useState(false);
  const older = useRevision(current.portfolioId, entry.revision);
  const comparison = older.data ? compareRevisions(older.data, current) : [];
  const differing = comparison.filter((field) => field.differs).length;
  const rows = onlyDifferences ? comparison.filter((field) => field.differs) : comparison;
  const currentLabel = `Current (revision ${current.revision})`;
  const servedFileIds = fileIdsOf(current);

  return (
    <>
      <header className="compare-header">
        <h2 id={titleId}>Revision {entry.revision} and the current version</h2>
        <p className="muted">
          Revision {entry.revision}: {commandLabel(entry.command)} by {entry.modifiedBy},{' '}
          {formatDate(entry.modifiedTime)}. Current: revision {current.revision}, changed{' '}
          {formatDate(current.modifiedTime)}.
        </p>
      </header>
      <div className="compare-scroll">
        {older.isPending ? (
          <p role="status">Loading revision {entry.revision}…</p>
        ) : older.isError ? (
          <p role="alert" className="form-error">
            Revision {entry.revision} could not be loaded: {describeError(older.error)}
          </p>
        ) : (
          <>
            <div className="compare-toolbar">
              <p role="status" className="compare-summary">
                {differing === 0
                  ? 'No field differs from the current version.'
                  : `${differing} ${differing === 1 ? 'field differs' : 'fields differ'} from the current version.`}
              </p>
              <label className="switch">
                <input
                  type="checkbox"
                  checked={onlyDifferences}
                  onChange={(event) => setOnlyDifferences(event.target.checked)}
                />
                <span>Only fields that differ</span>
              </label>
            </div>
            <table className="compare-table">
              <caption className="visually-hidden">
                Revision {entry.revision} compared with the current version, field by field
              </caption>
              <thead>
                <tr>
                  <th scope="col">Field</th>
                  <th scope="col">Revision {entry.revision}</th>
                  <th scope="col">{currentLabel}</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((field) => (
                  <tr key={field.key} className={field.differs ? 'compare-row--differs' : ''}>
                    <th scope="row">
                      {field.label}
                      {field.differs && <span className="differs-mark">differs</span>}
                    </th>
                    <td>
                      <RevisionValue
                        portfolioId={current.portfolioId}
                        kind={field.kind}
                        value={older.data[field.key]}
                        servedFileIds={servedFileIds}
                      />
                    </td>
                    <td>
                      <RevisionValue
                        portfolioId={current.portfolioId}
                        kind={field.kind}
                        value={current[field.key]}
                        servedFileIds={servedFileIds}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      </div>
      <div className="dialog-actions">
        <button type="button" className="button" onClick={onClose} autoFocus>
          Close
        </button>
        {canRestore && entry.revision !== current.revision && (
          <RestoreRevision
            revision={entry.revision}
            current={current}
            disabled={!older.data}
            onRestored={onClose}
          />
        )}
      </div>
    </>
  );
}
