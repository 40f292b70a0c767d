import { useEffect, useId, useRef, useState, type DragEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import {
  automaticCsvMapping,
  CSV_FIELDS,
  fieldLabelOf,
  isAdminCsvField,
  type CsvKey,
  type FieldKey,
} from '../../../shared';
import { describeError } from '../api/api-error';
import { importCsv, type CsvImportReport } from '../api/import-csv';
import type { ImportHandle } from '../api/import-zip';
import { queryKeys } from '../api/query-keys';
import { previewCsv, type CsvPreview } from './csv-preview';
import { recallMapping, rememberMapping } from './remembered-mapping';

type Run =
  | { step: 'none' }
  | { step: 'sending'; dryRun: boolean; fraction: number }
  | { step: 'done'; dryRun: boolean; report: CsvImportReport }
  | { step: 'failed'; dryRun: boolean; message: string };

interface Chosen {
  file: File;
  preview: CsvPreview;
  /** Column header → field ('' : not imported). */
  mapping: Record<string, string>;
  key: CsvKey;
}

const REQUIRED: FieldKey[] = ['memberBarcode', 'category', 'projectTitle', 'projectDetail'];
/** Rows of a report listed one by one; the counts tell the rest. */
const LISTED_ROWS = 200;

const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

const KEY_WORDS: Record<CsvKey, string> = {
  'memberBarcode,projectTitle': 'Member barcode and project title',
  portfolioId: 'Portfolio id',
};

const ACTION_WORDS = {
  dry: {
    create: 'will be added',
    update: 'will be updated',
    unchanged: 'already up to date',
    refused: 'will not be imported',
  },
  done: {
    create: 'added',
    update: 'updated',
    unchanged: 'already up to date',
    refused: 'not imported',
  },
} as const;

/**
 * CSV import on the Import page (DESIGN §16): choose or drop a spreadsheet saved as CSV, map its
 * columns to fields with a preview of the first rows (a mapping is remembered for the next file
 * with the same header row), check it with a dry run that lists what each row would do, then
 * import it.
 */
export function CsvImportSection({ isAdmin }: { isAdmin: boolean }) {
  const queryClient = useQueryClient();
  const [chosen, setChosen] = useState<Chosen | null>(null);
  const [readError, setReadError] = useState('');
  const [run, setRun] = useState<Run>({ step: 'none' });
  const [dragging, setDragging] = useState(false);
  const handle = useRef<ImportHandle<CsvImportReport> | null>(null);
  const resultRef = useRef<HTMLHeadingElement>(null);
  const mappingRef = useRef<HTMLHeadingElement>(null);
  const hintId = useId();
  const keyName = useId();

  useEffect(() => () => handle.current?.abort(), []);
  // A newly chosen file's mapping takes the focus, so a keyboard user goes on from there.
  const chosenFile = chosen?.file;
  useEffect(() => {
    if (chosenFile) mappingRef.current?.focus();
  }, [chosenFile]);
  useEffect(() => {
    if (run.step === 'done' || run.step === 'failed') resultRef.current?.focus();
  }, [run.step]);

  const sending = run.step === 'sending';
  const fields = CSV_FIELDS.filter((field) => isAdmin || !isAdminCsvField(field));

  async function choose(file: File | undefined) {
    if (!file || sending) return;
    setRun({ step: 'none' });
    setReadError('');
    try {
      const preview = await previewCsv(file);
      const remembered = recallMapping(preview.header);
      const mapping: Record<string, string> = Object.fromEntries(
        preview.header.map((column) => [column, '']),
      );
      Object.assign(mapping, remembered?.mapping ?? automaticCsvMapping(preview.header, isAdmin));
      const key: CsvKey =
        remembered?.key ??
        (Object.values(mapping).includes('portfolioId')
          ? 'portfolioId'
          : 'memberBarcode,projectTitle');
      setChosen({ file, preview, mapping, key });
    } catch (error) {
      setChosen(null);
      setReadError(`${file.name} cannot be imported: ${(error as Error).message}`);
    }
  }

  function update(next: Partial<Pick<Chosen, 'mapping' | 'key'>>) {
    if (!chosen) return;
    const changed = { ...chosen, ...next };
    setChosen(changed);
    setRun({ step: 'none' });
    rememberMapping(chosen.preview.header, { mapping: changed.mapping, key: changed.key });
  }

  function send(dryRun: boolean) {
    if (!chosen || sending) return;
    const mapping = Object.fromEntries(
      Object.entries(chosen.mapping).filter(([, field]) => field !== ''),
    );
    setRun({ step: 'sending', dryRun, fraction: 0 });
    const current = importCsv(chosen.file, { dryRun, mapping, key: chosen.key }, (fraction) =>
      setRun((previous) => (previous.step === 'sending' ? { ...previous, fraction } : previous)),
    );
    handle.current = current;
    current.promise.then(
      (report) => {
        setRun({ step: 'done', dryRun, report });
        if (!dryRun) void queryClient.invalidateQueries({ queryKey: queryKeys.portfolios });
      },
      (error: unknown) => {
        if (error instanceof DOMException && error.name === 'AbortError') {
          setRun({ step: 'none' });
          return;
        }
        setRun({ step: 'failed', dryRun, message: describeError(error) });
      },
    );
  }

  const mapped = new Set(chosen ? Object.values(chosen.mapping).filter(Boolean) : []);
  const keyFields = chosen ? (chosen.key.split(',') as FieldKey[]) : [];
  const missingKey = keyFields.filter((field) => !mapped.has(field));
  const missingRequired = REQUIRED.filter((field) => !mapped.has(field));

  return (
    <section className="csv-import" aria-labelledby="csv-import-heading">
      <h2 id="csv-import-heading">Import a spreadsheet (CSV)</h2>
      <p>
        Add or update portfolios from a spreadsheet saved as “CSV UTF-8”: one row per portfolio, the
        first row naming the columns. In cells that hold a list, such as tags, separate the entries
        with a semicolon (wood; glass). Rows that match a portfolio already here update it;
        importing the same file again changes nothing.
      </p>
      <div
        className={`drop-zone import-drop ${dragging ? 'drop-zone--active' : ''}`}
        onDragOver={(event) => {
          event.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(event: DragEvent<HTMLDivElement>) => {
          event.preventDefault();
          setDragging(false);
          void choose(event.dataTransfer.files[0]);
        }}
      >
        <p id={hintId}>
          Drop a CSV file here, or{' '}
          <label className="file-picker">
            <input
              type="file"
              className="visually-hidden"
              accept=".csv,text/csv"
              disabled={sending}
              aria-describedby={hintId}
              onChange={(event) => {
                void choose(event.target.files?.[0]);
                event.target.value = '';
              }}
            />
            <span className="button button--small">Choose a CSV</span>
          </label>
        </p>
      </div>
      {readError && (
        <p className="form-error" role="alert">
          {readError}
        </p>
      )}

      {chosen && (
        <div className="card csv-mapping">
          <h3 ref={mappingRef} tabIndex={-1}>
            Columns of {chosen.file.name}
          </h3>
          <p className="field-hint">
            Choose the field each column fills. Columns set to “Not imported” are left out. This
            choice is remembered for files with the same columns.
          </p>
          <ul className="csv-columns">
            {chosen.preview.header.map((column, index) => {
              const id = `csv-column-${index}`;
              const samples = chosen.preview.rows
                .map((row) => row[index] ?? '')
                .filter((cell) => cell.trim() !== '')
                .slice(0, 3);
              return (
                <li key={`${index}-${column}`} className="csv-column">
                  <label htmlFor={id} className="field-label">
                    {column || `Column ${index + 1} (no name)`}
                  </label>
                  <select
                    id={id}
                    value={chosen.mapping[column] ?? ''}
                    disabled={sending}
                    onChange={(event) =>
                      update({ mapping: { ...chosen.mapping, [column]: event.target.value } })
                    }
                  >
                    <option value="">Not imported</option>
                    {fields.map((field) => (
                      <option
                        key={field}
                        value={field}
                        disabled={mapped.has(field) && chosen.mapping[column] !== field}
                      >
                        {fieldLabelOf(field)}
                      </option>
                    ))}
                  </select>
                  <span className="csv-samples">
                    {samples.length > 0 ? `e.g. ${samples.join(' · ').slice(0, 120)}` : 'empty'}
                  </span>
                </li>
              );
            })}
          </ul>

          <fieldset className="csv-key" disabled={sending}>
            <legend>Match rows to portfolios already here by</legend>
            {(Object.keys(KEY_WORDS) as CsvKey[]).map((key) => (
              <label key={key} className="radio">
                <input
                  type="radio"
                  name={keyName}
                  value={key}
                  checked={chosen.key === key}
                  onChange={() => update({ key })}
                />{' '}
                {KEY_WORDS[key]}
              </label>
            ))}
          </fieldset>
          {missingKey.length > 0 && (
            <p className="form-error" role="alert">
              Choose a column for {missingKey.map(fieldLabelOf).join(' and ')}: rows are matched by
              it.
            </p>
          )}
          {missingRequired.length > 0 && missingKey.length === 0 && (
            <p className="field-hint">
              No column fills {missingRequired.map(fieldLabelOf).join(', ')}: rows that add a new
              portfolio need {missingRequired.length === 1 ? 'it' : 'them'}.
            </p>
          )}

          <MappedPreview chosen={chosen} />

          <div className="form-actions">
            <button
              type="button"
              className="button"
              disabled={sending || missingKey.length > 0}
              onClick={() => send(true)}
            >
              Check the rows
            </button>
            <button
              type="button"
              className="button button--primary"
              disabled={sending || missingKey.length > 0}
              onClick={() => send(false)}
            >
              Import
            </button>
          </div>
        </div>
      )}

      {run.step === 'sending' && (
        <div className="import-progress" role="status">
          <p>
            {run.fraction < 1
              ? `Sending ${chosen?.file.name}… ${Math.round(run.fraction * 100)} %`
              : run.dryRun
                ? 'Checking each row…'
                : 'Importing each row…'}
          </p>
          <progress max={1} value={run.fraction} aria-label="Sent so far" />{' '}
          <button
            type="button"
            className="button button--small"
            onClick={() => handle.current?.abort()}
          >
            Cancel
          </button>
        </div>
      )}

      {run.step === 'failed' && (
        <section className="card import-result" aria-labelledby="csv-result-heading">
          <h3 id="csv-result-heading" ref={resultRef} tabIndex={-1}>
            {run.dryRun ? 'The file could not be checked' : 'Nothing was imported'}
          </h3>
          <p className="form-error" role="alert">
            {run.message}
          </p>
        </section>
      )}

      {run.step === 'done' && (
        <CsvReport report={run.report} headingRef={resultRef} onImport={() => send(false)} />
      )}
    </section>
  );
}

/** The first rows as the import will read them: one column per mapped field. */
function MappedPreview({ chosen }: { chosen: Chosen }) {
  const columns = chosen.preview.header
    .map((column, index) => ({ column, index, field: chosen.mapping[column] ?? '' }))
    .filter(({ field }) => field !== '');
  if (columns.length === 0 || chosen.preview.rows.length === 0) return null;
  return (
    <div
      className="csv-preview"
      role="region"
      aria-label="First rows, as they will be imported"
      tabIndex={0}
    >
      <table>
        <caption>
          First {count(chosen.preview.rows.length, 'row')}, as they will be imported
        </caption>
        <thead>
          <tr>
            <th scope="col">Row</th>
            {columns.map(({ column, field }) => (
              <th scope="col" key={column}>
                {fieldLabelOf(field)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {chosen.preview.rows.map((row, rowIndex) => (
            <tr key={rowIndex}>
              <th scope="row">{rowIndex + 1}</th>
              {columns.map(({ column, index }) => (
                <td key={column}>{(row[index] ?? '').slice(0, 200)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function CsvReport({
  report,
  headingRef,
  onImport,
}: {
  report: CsvImportReport;
  headingRef: React.RefObject<HTMLHeadingElement | null>;
  onImport(): void;
}) {
  const words = report.dryRun ? ACTION_WORDS.dry : ACTION_WORDS.done;
  const { create, update, unchanged, refused } = report.counts;
  const total = create + update + unchanged + refused;
  // Refused rows first: they are the ones to fix.
  const listed = [...report.rows]
    .sort(
      (a, b) => Number(b.action === 'refused') - Number(a.action === 'refused') || a.row - b.row,
    )
    .slice(0, LISTED_ROWS);
  return (
    <section className="card import-result" aria-labelledby="csv-result-heading">
      <h3 id="csv-result-heading" ref={headingRef} tabIndex={-1}>
        {report.dryRun ? `Check of ${count(total, 'row')}: nothing was changed` : 'Imported'}
      </h3>
      <ul className="import-report">
        <li>
          <strong>{count(create, 'portfolio')}</strong> {words.create}
        </li>
        <li>
          <strong>{count(update, 'portfolio')}</strong> {words.update}
        </li>
        <li>
          <strong>{count(unchanged, 'row')}</strong> {words.unchanged}
        </li>
        <li>
          <strong>{count(refused, 'row')}</strong> {words.refused}
          {refused > 0 && ': see why below'}
        </li>
      </ul>
      {report.ignoredColumns.length > 0 && (
        <p className="field-hint">Columns not imported: {report.ignoredColumns.join(', ')}.</p>
      )}
      {report.dryRun && create + update > 0 && (
        <p>
          <button type="button" className="button button--primary" onClick={onImport}>
            Import now ({count(create + update, 'change')})
          </button>
        </p>
      )}
      {listed.length > 0 && (
        <ol className="csv-rows" aria-label="Each row">
          {listed.map((row) => (
            <li key={row.row} className={row.action === 'refused' ? 'csv-row--refused' : ''}>
              Row {row.row}: {words[row.action]}
              {row.errors.length > 0 && (
                <>
                  {' — '}
                  {row.errors
                    .map((error) =>
                      error.field
                        ? `${fieldLabelOf(error.field)}: ${error.message}`
                        : error.message,
                    )
                    .join(' ')}
                </>
              )}
            </li>
          ))}
        </ol>
      )}
      {report.rows.length > listed.length && (
        <p className="field-hint">
          {count(report.rows.length - listed.length, 'more row')} not listed; the counts above
          include them.
        </p>
      )}
    </section>
  );
}
