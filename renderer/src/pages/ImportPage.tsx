import { useEffect, useId, useRef, useState, type DragEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { describeError } from '../api/api-error';
import { importZip, type ImportHandle, type ImportReport } from '../api/import-zip';
import { queryKeys } from '../api/query-keys';
import { CsvImportSection } from '../csv-import/CsvImportSection';
import { useDocumentTitle } from '../components/use-document-title';
import { paths } from '../paths';
import { isStaff } from '../session/permissions';
import { useUser } from '../session/use-session';

type State =
  | { step: 'idle' }
  | { step: 'sending'; name: string; fraction: number }
  | { step: 'done'; name: string; report: ImportReport }
  | { step: 'failed'; name: string; message: string };

const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * Import of an export ZIP (DESIGN §11), and below it of a spreadsheet's CSV (DESIGN §16,
 * csv-import/CsvImportSection.tsx). ZIP: drop or choose the ZIP, watch it go, then read what
 * became of each portfolio. The server checks the whole ZIP before it writes anything, so a bad
 * one changes nothing, and importing the same ZIP again changes nothing either.
 */
export function ImportPage() {
  useDocumentTitle('Import');
  const user = useUser();
  const queryClient = useQueryClient();
  const [state, setState] = useState<State>({ step: 'idle' });
  const [dragging, setDragging] = useState(false);
  const handle = useRef<ImportHandle | null>(null);
  const hintId = useId();
  const resultRef = useRef<HTMLHeadingElement>(null);

  useEffect(() => () => handle.current?.abort(), []);
  useEffect(() => {
    if (state.step === 'done' || state.step === 'failed') resultRef.current?.focus();
  }, [state.step]);

  if (!isStaff(user)) {
    return (
      <div className="page">
        <h1>Import</h1>
        <p className="empty-state">Only editors and admins can import portfolios.</p>
      </div>
    );
  }

  const sending = state.step === 'sending';

  function start(file: File | undefined) {
    if (!file || sending) return;
    const name = file.name;
    setState({ step: 'sending', name, fraction: 0 });
    const current = importZip(file, (fraction) =>
      setState((previous) => (previous.step === 'sending' ? { ...previous, fraction } : previous)),
    );
    handle.current = current;
    current.promise.then(
      (report) => {
        setState({ step: 'done', name, report });
        void queryClient.invalidateQueries({ queryKey: queryKeys.portfolios });
      },
      (error: unknown) => {
        if (error instanceof DOMException && error.name === 'AbortError') {
          setState({ step: 'idle' });
          return;
        }
        setState({ step: 'failed', name, message: describeError(error) });
      },
    );
  }

  function onDrop(event: DragEvent<HTMLDivElement>) {
    event.preventDefault();
    setDragging(false);
    start(event.dataTransfer.files[0]);
  }

  return (
    <div className="page import-page">
      <div className="page-heading">
        <h1>Import</h1>
      </div>
      <p>
        Bring in portfolios from a ZIP exported by Portfolio Manager (the gallery’s Export ZIP),
        with their history and files. Portfolios this library does not have are added; ones it
        already has are merged, never duplicated. Importing the same ZIP again changes nothing.
      </p>

      <div
        className={`drop-zone import-drop ${dragging ? 'drop-zone--active' : ''}`}
        onDragOver={(event) => {
          event.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={onDrop}
      >
        <p id={hintId}>
          Drop an export ZIP here, or{' '}
          <label className="file-picker">
            <input
              type="file"
              className="visually-hidden"
              accept=".zip"
              disabled={sending}
              aria-describedby={hintId}
              onChange={(event) => {
                start(event.target.files?.[0]);
                event.target.value = '';
              }}
            />
            <span className="button button--small">Choose a ZIP</span>
          </label>
        </p>
      </div>

      {state.step === 'sending' && (
        <div className="import-progress" role="status">
          <p>
            {state.fraction < 1
              ? `Sending ${state.name}… ${Math.round(state.fraction * 100)} %`
              : `Checking and importing ${state.name}…`}
          </p>
          <progress max={1} value={state.fraction} aria-label="Sent so far" />{' '}
          <button
            type="button"
            className="button button--small"
            onClick={() => handle.current?.abort()}
          >
            Cancel
          </button>
        </div>
      )}

      {state.step === 'failed' && (
        <section className="card import-result" aria-labelledby="import-result-heading">
          <h2 id="import-result-heading" ref={resultRef} tabIndex={-1}>
            {state.name} was not imported
          </h2>
          <p className="form-error" role="alert">
            {state.message}
          </p>
        </section>
      )}

      {state.step === 'done' && (
        <ImportResult name={state.name} report={state.report} headingRef={resultRef} />
      )}

      <CsvImportSection isAdmin={user.role === 'admin'} />
    </div>
  );
}

function ImportResult({
  name,
  report,
  headingRef,
}: {
  name: string;
  report: ImportReport;
  headingRef: React.RefObject<HTMLHeadingElement | null>;
}) {
  const nothing = report.created + report.unchanged + report.merged + report.refused.length === 0;
  return (
    <section className="card import-result" aria-labelledby="import-result-heading">
      <h2 id="import-result-heading" ref={headingRef} tabIndex={-1}>
        {name} was imported
      </h2>
      {nothing ? (
        <p>The ZIP held no portfolios.</p>
      ) : (
        <ul className="import-report">
          <li>
            <strong>{count(report.created, 'portfolio')} added</strong>, with their history and
            files.
          </li>
          <li>
            <strong>{count(report.unchanged, 'portfolio')} already here</strong> as in the ZIP: left
            as they were.
          </li>
          <li>
            <strong>{count(report.merged, 'portfolio')} merged</strong>: changes from the ZIP added
            to the ones made here.
          </li>
          {report.conflicts > 0 && (
            <li>
              <strong>{count(report.conflicts, 'portfolio')} with a conflict</strong>: the ZIP and
              this library changed the same field differently. This library’s value was kept; open
              each to compare both side by side and choose:
              <ul>
                {report.conflicted.map((portfolioId) => (
                  <li key={portfolioId}>
                    <Link to={paths.portfolio(portfolioId)}>{portfolioId}</Link>
                  </li>
                ))}
              </ul>
            </li>
          )}
          {report.refused.length > 0 && (
            <li>
              <strong>{count(report.refused.length, 'portfolio')} not imported</strong>:
              <ul>
                {report.refused.map(({ portfolioId, reason }) => (
                  <li key={portfolioId}>
                    <code>{portfolioId}</code>: {reason}
                  </li>
                ))}
              </ul>
            </li>
          )}
        </ul>
      )}
    </section>
  );
}
