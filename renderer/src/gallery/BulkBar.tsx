import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useRef, useState } from 'react';
import type { BulkAnswer, BulkEditBody } from '../../../shared';
import { describeError } from '../api/api-error';
import { type GalleryItem, bulkEdit, bulkUndo } from '../api/portfolio-api';
import { queryKeys } from '../api/query-keys';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { TextField } from '../components/TextField';
import { useModalDialog } from '../components/use-modal-dialog';
import { ExportButtons } from './ExportButtons';

/** What is selected: some portfolios by id, or everything the gallery's filter and search match. */
export interface GallerySelection {
  all: boolean;
  ids: ReadonlySet<string>;
}

interface BulkBarProps {
  selection: GallerySelection;
  /** How many portfolios the gallery's filter and search match. */
  total: number;
  /** The gallery's filter, search and order (a selection of "all" uses them). */
  params: { orderBy: string; filter?: string; q?: string };
  /** The portfolios loaded, to name those an action left unchanged. */
  items: readonly GalleryItem[];
  admin: boolean;
  onSelectAll(): void;
  onClear(): void;
}

type Outcome = { answer: BulkAnswer; undo: boolean };

/** What one of the value actions asks for. */
type Ask = 'addTag' | 'removeTag' | 'category' | null;

const ASK_WORDS = {
  addTag: { title: 'Add a tag', label: 'Tag to add', button: 'Add tag' },
  removeTag: { title: 'Remove a tag', label: 'Tag to remove', button: 'Remove tag' },
  category: { title: 'Set the category', label: 'Category', button: 'Set category' },
} as const;

/**
 * The export takes a selection as `ids` in its address, and a server refuses addresses much
 * over 16 KB: a longer list of ids is not offered for export (a filter selects any number).
 */
const MAX_EXPORT_IDS_LENGTH = 12_000;

const plural = (count: number) => (count === 1 ? 'portfolio' : 'portfolios');

/** A result in plain words: how many changed, and why the others were left as they were. */
export function summarize(answer: BulkAnswer, undo: boolean): string {
  const count = (status: number) => answer.results.filter((r) => r.status === status).length;
  const changed = count(200);
  const parts = [
    changed === 0
      ? 'Nothing changed.'
      : `${changed} ${plural(changed)} ${undo ? 'changed back' : 'changed'}.`,
  ];
  const reasons: [number, string][] = [
    [403, 'not allowed'],
    [409, 'changed meanwhile: left as it was'],
    [400, 'would break a limit'],
    [404, 'no longer there'],
  ];
  for (const [status, words] of reasons) {
    const n = count(status);
    if (n > 0) parts.push(`${n} ${words}.`);
  }
  return parts.join(' ');
}

/**
 * The bar of bulk actions (DESIGN §16) while portfolios are selected: each action goes to the
 * bulk endpoint once, its result is told in plain words, and one Undo reverses the whole action.
 */
export function BulkBar({
  selection,
  total,
  params,
  items,
  admin,
  onSelectAll,
  onClear,
}: BulkBarProps) {
  const queryClient = useQueryClient();
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [ask, setAsk] = useState<Ask>(null);
  const [confirmTrash, setConfirmTrash] = useState(false);
  const status = useRef<HTMLParagraphElement>(null);

  const count = selection.all ? total : selection.ids.size;
  const ids = [...selection.ids];
  const scope: Pick<BulkEditBody, 'ids' | 'filter' | 'q'> = selection.all
    ? { filter: params.filter ?? '', ...(params.q ? { q: params.q } : {}) }
    : { ids };
  const idList = ids.join(',');
  const exportParams = selection.all ? params : { ...params, ids: idList };
  const exportable = selection.all || idList.length <= MAX_EXPORT_IDS_LENGTH;

  const run = async (action: () => Promise<BulkAnswer>, undo: boolean) => {
    setBusy(true);
    setFailure(null);
    try {
      const answer = await action();
      setOutcome({ answer, undo });
    } catch (error) {
      setFailure(`${undo ? 'The undo' : 'The change'} failed. ${describeError(error)}`);
    } finally {
      setBusy(false);
      await queryClient.invalidateQueries({ queryKey: queryKeys.portfolios });
    }
  };
  const apply = (change: Omit<BulkEditBody, 'ids' | 'filter' | 'q'>) =>
    void run(() => bulkEdit({ ...scope, ...change }), false);
  // Undo and a trash take away the button that had focus: the result takes it instead.
  const undo = (token: string) =>
    void run(() => bulkUndo(token), true).then(() => status.current?.focus());

  // Clear forgets the last result too; a trash keeps its result (and Undo) on screen.
  const clearAll = () => {
    setOutcome(null);
    setFailure(null);
    onClear();
  };
  if (count === 0 && !outcome && !failure && !busy) return null;

  const titleOf = (portfolioId: string) =>
    items.find((item) => item.portfolioId === portfolioId)?.projectTitle || 'Untitled';
  const unchanged = outcome?.answer.results.filter((result) => result.status !== 200) ?? [];
  const undoToken = outcome && !outcome.undo ? outcome.answer.undoToken : null;

  return (
    <>
      <section
        className="bulk-bar"
        aria-label="Bulk actions"
        onKeyDown={(event) => {
          if (event.key === 'Escape' && !ask && !confirmTrash) {
            event.preventDefault();
            clearAll();
          }
        }}
      >
        <div className="bulk-bar-selection">
          <p className="bulk-count" aria-live="polite">
            {count} selected
          </p>
          {!selection.all && count < total && (
            <button type="button" className="button button--quiet" onClick={onSelectAll}>
              Select all {total} matching
            </button>
          )}
          <button type="button" className="button button--quiet" onClick={clearAll}>
            Clear
          </button>
        </div>
        {count > 0 && (
          <div className="bulk-actions" role="group" aria-label="Change the selected portfolios">
            {admin && (
              <>
                <button
                  type="button"
                  className="button"
                  disabled={busy}
                  onClick={() => apply({ command: 'publish' })}
                >
                  Publish
                </button>
                <button
                  type="button"
                  className="button"
                  disabled={busy}
                  onClick={() => apply({ command: 'unpublish' })}
                >
                  Unpublish
                </button>
                <button
                  type="button"
                  className="button"
                  disabled={busy}
                  onClick={() => apply({ command: 'activate' })}
                >
                  Activate
                </button>
                <button
                  type="button"
                  className="button"
                  disabled={busy}
                  onClick={() => apply({ command: 'deactivate' })}
                >
                  Deactivate
                </button>
              </>
            )}
            <button
              type="button"
              className="button"
              disabled={busy}
              onClick={() => setAsk('addTag')}
            >
              Add tag…
            </button>
            <button
              type="button"
              className="button"
              disabled={busy}
              onClick={() => setAsk('removeTag')}
            >
              Remove tag…
            </button>
            <button
              type="button"
              className="button"
              disabled={busy}
              onClick={() => setAsk('category')}
            >
              Set category…
            </button>
            {admin && (
              <button
                type="button"
                className="button"
                disabled={busy}
                onClick={() => apply({ set: { staffPick: true } })}
              >
                Staff pick
              </button>
            )}
            <button
              type="button"
              className="button button--danger"
              disabled={busy}
              onClick={() => setConfirmTrash(true)}
            >
              Move to trash
            </button>
            {exportable ? (
              <ExportButtons
                params={exportParams}
                label="Export the selected portfolios"
                what=" of selection"
              />
            ) : (
              <p className="bulk-note">
                Too many portfolios ticked one by one to export at once: use Select all matching, or
                a filter.
              </p>
            )}
          </div>
        )}
        {/* One live region: "Working…", then the result in words. */}
        <p className="bulk-status" role="status" ref={status} tabIndex={-1}>
          {busy ? 'Working…' : outcome ? summarize(outcome.answer, outcome.undo) : ''}
        </p>
        {failure && (
          <p className="bulk-failure" role="alert">
            {failure}
          </p>
        )}
        {outcome && !busy && (
          <div className="bulk-result">
            {unchanged.length > 0 && (
              <ul className="bulk-unchanged" aria-label="Left unchanged">
                {unchanged.map((result) => (
                  <li key={result.portfolioId}>
                    <strong>{titleOf(result.portfolioId)}</strong>: {result.message}
                  </li>
                ))}
              </ul>
            )}
            {undoToken && (
              <button
                type="button"
                className="button"
                disabled={busy}
                onClick={() => undo(undoToken)}
              >
                Undo
              </button>
            )}
          </div>
        )}
      </section>
      <ValueDialog
        ask={ask}
        onCancel={() => setAsk(null)}
        onSubmit={(value) => {
          const kind = ask;
          setAsk(null);
          if (kind === 'addTag') apply({ addTags: { generalTag: [value] } });
          if (kind === 'removeTag') apply({ removeTags: { generalTag: [value] } });
          if (kind === 'category') apply({ set: { category: value } });
        }}
      />
      <ConfirmDialog
        open={confirmTrash}
        title={`Move ${count} ${plural(count)} to the trash?`}
        confirmLabel="Move to trash"
        danger
        busy={busy}
        onCancel={() => setConfirmTrash(false)}
        onConfirm={() => {
          setConfirmTrash(false);
          void run(() => bulkEdit({ ...scope, command: 'trash' }), false).then(() => {
            onClear();
            status.current?.focus();
          });
        }}
      >
        <p>They can be brought back from the trash, or with Undo right after.</p>
      </ConfirmDialog>
    </>
  );
}

/** Asks for the one value a tag or category action needs. */
function ValueDialog({
  ask,
  onCancel,
  onSubmit,
}: {
  ask: Ask;
  onCancel(): void;
  onSubmit(value: string): void;
}) {
  const ref = useModalDialog(ask !== null);
  const titleId = useId();
  const [value, setValue] = useState('');
  const words = ask ? ASK_WORDS[ask] : null;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const trimmed = value.trim();
    if (!trimmed) return;
    setValue('');
    onSubmit(trimmed);
  };
  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        onCancel();
      }}
    >
      {words && (
        <form onSubmit={submit}>
          <h2 id={titleId}>{words.title}</h2>
          <div className="dialog-body">
            <TextField label={words.label} value={value} onChange={setValue} required />
          </div>
          <div className="dialog-actions">
            <button type="button" className="button" onClick={onCancel}>
              Cancel
            </button>
            <button type="submit" className="button button--primary" disabled={!value.trim()}>
              {words.button}
            </button>
          </div>
        </form>
      )}
    </dialog>
  );
}
