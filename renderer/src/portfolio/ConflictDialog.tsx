import {
  type FormField,
  type PortfolioFormValues,
  FIELD_LABELS,
  displayValue,
} from './portfolio-form-model';
import { useModalDialog } from '../components/use-modal-dialog';

interface ConflictDialogProps {
  open: boolean;
  /** Fields someone else changed since this form was loaded. */
  theirChanges: FormField[];
  theirs: PortfolioFormValues;
  mine: PortfolioFormValues;
  busy: boolean;
  onOverwrite(): void;
  onReload(): void;
  onKeepEditing(): void;
}

/** Shown on 409: what the other person changed, and the two ways forward. */
export function ConflictDialog({
  open,
  theirChanges,
  theirs,
  mine,
  busy,
  onOverwrite,
  onReload,
  onKeepEditing,
}: ConflictDialogProps) {
  const ref = useModalDialog(open);

  return (
    <dialog
      ref={ref}
      className="dialog dialog--wide"
      aria-labelledby="conflict-title"
      onCancel={(event) => {
        event.preventDefault();
        onKeepEditing();
      }}
    >
      {open && (
        <>
          <h2 id="conflict-title">Someone else changed this portfolio</h2>
          <div className="dialog-body">
            {theirChanges.length === 0 ? (
              <p>
                It was saved again while you were editing (its files or status changed), but none of
                the fields in this form.
              </p>
            ) : (
              <>
                <p>While you were editing, these fields were changed:</p>
                <table className="conflict-table">
                  <thead>
                    <tr>
                      <th scope="col">Field</th>
                      <th scope="col">Their version</th>
                      <th scope="col">Your version</th>
                    </tr>
                  </thead>
                  <tbody>
                    {theirChanges.map((field) => (
                      <tr key={field}>
                        <th scope="row">{FIELD_LABELS[field]}</th>
                        <td>{displayValue(theirs[field])}</td>
                        <td>{displayValue(mine[field])}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </>
            )}
            <p>
              Overwrite saves your version of every field. Reload discards your changes and shows
              theirs.
            </p>
          </div>
          <div className="dialog-actions">
            <button type="button" className="button" onClick={onKeepEditing} autoFocus>
              Keep editing
            </button>
            <button type="button" className="button" onClick={onReload} disabled={busy}>
              Reload their version
            </button>
            <button
              type="button"
              className="button button--danger"
              onClick={onOverwrite}
              disabled={busy}
            >
              Overwrite with mine
            </button>
          </div>
        </>
      )}
    </dialog>
  );
}
