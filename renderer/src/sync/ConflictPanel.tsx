import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import type { PortfolioDetail } from '../../../shared';
import { queryKeys } from '../api/query-keys';
import {
  type Conflict,
  type ResolveConflictBody,
  listPortfolioConflicts,
  resolveConflict,
} from '../api/sync-api';
import { TagInput } from '../components/TagInput';
import { TextField } from '../components/TextField';
import { useToast } from '../components/use-toast';
import { COMPARED_FIELDS, type FieldKind, fieldLabel, fileIdsOf } from '../history/revision-diff';
import { RevisionValue } from '../history/RevisionValue';
import { formatDate } from '../lib/format';
import { paths } from '../paths';
import { describeSyncError } from './sync-words';

/** How a conflicting field reads and is edited; a key the detail page does not show is text. */
function kindOf(field: string): FieldKind {
  return COMPARED_FIELDS.find((compared) => compared.key === field)?.kind ?? 'text';
}

/** Kinds the conflict editor can type a value of; files are chosen, never typed. */
const TYPED_KINDS: readonly FieldKind[] = ['text', 'html', 'tags', 'flag'];
const isTyped = (field: string) => TYPED_KINDS.includes(kindOf(field));

/** Why a file field is not edited in the panel, and where to change it. */
function FileFieldNote({ field, portfolioId }: { field: string; portfolioId: string }) {
  return (
    <p className="conflict-file-note">
      <strong>{fieldLabel(field)}</strong> holds files, which cannot be typed here: “Save and
      resolve” keeps the current {kindOf(field) === 'cover' ? 'image' : 'files'}. To use theirs,
      choose “Keep theirs”; to pick other files, resolve first, then change them on the{' '}
      <Link to={paths.editPortfolio(portfolioId)}>edit page</Link>.
    </p>
  );
}

/** The open conflicts of one portfolio (staff only: viewers never see a conflict). */
export function usePortfolioConflicts(portfolioId: string, enabled: boolean) {
  return useQuery({
    queryKey: queryKeys.portfolioConflicts(portfolioId),
    queryFn: async ({ signal }) => (await listPortfolioConflicts(portfolioId, signal)).conflicts,
    enabled,
  });
}

interface ConflictPanelProps {
  detail: PortfolioDetail;
  /** May this user change the portfolio (resolving is an update)? */
  canResolve: boolean;
}

/**
 * A portfolio's sync conflicts: per field both values side by side (the base they both started
 * from below, small), and per conflict keep the current value, take theirs, or edit.
 */
export function ConflictPanel({ detail, canResolve }: ConflictPanelProps) {
  const conflicts = usePortfolioConflicts(detail.portfolioId, true);
  if (!conflicts.data || conflicts.data.length === 0) return null;
  const count = conflicts.data.length;
  return (
    <section className="card conflict-panel" aria-labelledby="conflict-heading">
      <h2 id="conflict-heading">
        {count === 1 ? 'A sync conflict to resolve' : `${count} sync conflicts to resolve`}
      </h2>
      <p>
        Changes made here and on another device collided: the same field changed on both, or a
        delete met an edit. Both sides are kept until someone chooses; the portfolio shows the
        current values meanwhile.
      </p>
      <ul className="conflict-list">
        {conflicts.data.map((conflict) => (
          <ConflictItem
            key={conflict.conflictId}
            conflict={conflict}
            detail={detail}
            canResolve={canResolve}
          />
        ))}
      </ul>
    </section>
  );
}

function ConflictItem({
  conflict,
  detail,
  canResolve,
}: {
  conflict: Conflict;
  detail: PortfolioDetail;
  canResolve: boolean;
}) {
  const queryClient = useQueryClient();
  const toast = useToast();
  const navigate = useNavigate();
  const choicesId = useId();
  const [editing, setEditing] = useState(false);
  // `deleted` is no field of the portfolio: it says which side deleted it (delete conflicts).
  const fields = Object.entries(conflict.fields).filter(([field]) => field !== 'deleted');
  const served = fileIdsOf(detail);
  /** One side's value of a field, as the history shows it (files as files). */
  const shown = (field: string, value: unknown) => (
    <RevisionValue
      portfolioId={detail.portfolioId}
      kind={kindOf(field)}
      value={value as never}
      servedFileIds={served}
    />
  );
  // A delete here against an edit elsewhere (theirs deleted), or an edit that brought back what
  // was deleted (the current side had deleted it): keeping the portfolio takes the other side.
  const deletedSide = conflict.fields.deleted?.current === true ? 'current' : 'theirs';
  const keptSide = deletedSide === 'current' ? 'theirs' : 'current';

  const resolve = useMutation({
    mutationFn: (body: ResolveConflictBody) =>
      resolveConflict(conflict.conflictId, { ...body, revision: detail.revision }),
    onSuccess: async (_answer, body) => {
      setEditing(false);
      const deleted = conflict.kind === 'delete' && body.keep === deletedSide && !body.fields;
      toast.success(
        conflict.kind === 'delete'
          ? deleted
            ? `The delete stands: “${detail.projectTitle}” is in the trash, where it can be restored.`
            : `The conflict is resolved: “${detail.projectTitle}” is kept.`
          : body.fields
            ? 'The conflict is resolved with your edit.'
            : body.keep === 'theirs'
              ? `The conflict is resolved: ${conflict.by}'s values are kept.`
              : 'The conflict is resolved: the current values are kept.',
      );
      if (deleted) {
        // Its page is gone; the trash is where it can be brought back.
        await navigate(paths.trash());
      }
      // The detail, its history and every conflict list are under 'portfolios'.
      await queryClient.invalidateQueries({ queryKey: queryKeys.portfolios });
    },
  });

  return (
    <li className="conflict-item">
      <p className="conflict-meta">
        From <strong>{conflict.by}</strong>&rsquo;s device, starting from revision{' '}
        {conflict.baseRevision} ·{' '}
        <time dateTime={new Date(conflict.createdTime).toISOString()}>
          {formatDate(conflict.createdTime)}
        </time>
      </p>
      {/* A field conflict's table says it all; a delete conflict is told by its note. */}
      {conflict.kind === 'delete' && conflict.note && <p className="notice">{conflict.note}</p>}
      {fields.length > 0 && (
        <table className="compare-table conflict-table">
          <caption className="visually-hidden">
            Conflicting values from {conflict.by}, side by side
          </caption>
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">Current</th>
              <th scope="col">Theirs ({conflict.by})</th>
            </tr>
          </thead>
          <tbody>
            {fields.map(([field, values]) => (
              <tr key={field}>
                <th scope="row">
                  {fieldLabel(field)}
                  <span className="conflict-base">
                    Before both edits: {shown(field, values.base)}
                  </span>
                </th>
                <td>{shown(field, values.current)}</td>
                <td>{shown(field, values.theirs)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {resolve.isError && (
        <p className="form-error" role="alert">
          The conflict was not resolved. {describeSyncError(resolve.error)}
        </p>
      )}
      {canResolve &&
        (editing ? (
          <ConflictEditor
            conflict={conflict}
            portfolioId={detail.portfolioId}
            busy={resolve.isPending}
            onSave={(values) => resolve.mutate({ keep: 'current', fields: values })}
            onCancel={() => setEditing(false)}
          />
        ) : (
          <>
            {conflict.kind === 'delete' && (
              <ul className="conflict-choices" id={choicesId}>
                <li>
                  <strong>Keep this portfolio</strong>: it stays as it is now
                  {keptSide === 'theirs' ? `, with ${conflict.by}'s edit` : ''}.
                </li>
                <li>
                  <strong>Move it to the trash</strong>: the delete stands; the portfolio can be
                  restored from the Trash.
                </li>
              </ul>
            )}
            <div className="button-row">
              {conflict.kind === 'delete' ? (
                <>
                  <button
                    type="button"
                    className="button"
                    disabled={resolve.isPending}
                    aria-describedby={choicesId}
                    onClick={() => resolve.mutate({ keep: keptSide })}
                  >
                    Keep this portfolio
                  </button>
                  <button
                    type="button"
                    className="button button--danger"
                    disabled={resolve.isPending}
                    aria-describedby={choicesId}
                    onClick={() => resolve.mutate({ keep: deletedSide })}
                  >
                    Move it to the trash
                  </button>
                </>
              ) : (
                <button
                  type="button"
                  className="button"
                  disabled={resolve.isPending}
                  onClick={() => resolve.mutate({ keep: 'current' })}
                >
                  Keep current
                </button>
              )}
              {conflict.kind === 'field' && fields.length > 0 && (
                <>
                  <button
                    type="button"
                    className="button"
                    disabled={resolve.isPending}
                    onClick={() => resolve.mutate({ keep: 'theirs' })}
                  >
                    Keep theirs
                  </button>
                  {fields.some(([field]) => isTyped(field)) && (
                    <button
                      type="button"
                      className="button"
                      disabled={resolve.isPending}
                      aria-expanded={editing}
                      onClick={() => setEditing(true)}
                    >
                      Edit…
                    </button>
                  )}
                </>
              )}
            </div>
            {conflict.kind === 'field' &&
              !fields.some(([field]) => isTyped(field)) &&
              fields.map(([field]) => (
                <FileFieldNote key={field} field={field} portfolioId={detail.portfolioId} />
              ))}
          </>
        ))}
    </li>
  );
}

/**
 * Edits the conflicting fields, starting from the current values: text, tags and flags are
 * typed; a file field says why it is not, and what saving does with it.
 */
function ConflictEditor({
  conflict,
  portfolioId,
  busy,
  onSave,
  onCancel,
}: {
  conflict: Conflict;
  portfolioId: string;
  busy: boolean;
  onSave(values: Record<string, unknown>): void;
  onCancel(): void;
}) {
  const conflicting = Object.keys(conflict.fields).filter((field) => field !== 'deleted');
  const editable = Object.entries(conflict.fields).filter(([field]) => isTyped(field));
  const files = conflicting.filter((field) => !isTyped(field));
  const [values, setValues] = useState<Record<string, unknown>>(() =>
    Object.fromEntries(editable.map(([field, sides]) => [field, sides.current])),
  );
  const set = (field: string) => (value: unknown) =>
    setValues((previous) => ({ ...previous, [field]: value }));

  function submit(event: FormEvent) {
    event.preventDefault();
    onSave(values);
  }

  return (
    <form className="conflict-editor" onSubmit={submit} aria-label="Edit the conflicting values">
      {editable.map(([field]) => {
        const kind = kindOf(field);
        const label = fieldLabel(field);
        if (kind === 'flag')
          return (
            <div className="field" key={field}>
              <label className="field-label">
                <input
                  type="checkbox"
                  checked={Boolean(values[field])}
                  onChange={(event) => set(field)(event.target.checked)}
                />{' '}
                {label}
              </label>
            </div>
          );
        if (kind === 'tags')
          return (
            <TagInput
              key={field}
              label={label}
              values={(values[field] as string[] | undefined) ?? []}
              onChange={set(field)}
            />
          );
        return (
          <TextField
            key={field}
            label={label}
            value={String(values[field] ?? '')}
            onChange={set(field)}
            multiline={kind === 'html' || String(values[field] ?? '').length > 80}
          />
        );
      })}
      {files.map((field) => (
        <FileFieldNote key={field} field={field} portfolioId={portfolioId} />
      ))}
      <div className="button-row">
        <button type="submit" className="button button--primary" disabled={busy}>
          Save and resolve
        </button>
        <button type="button" className="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
