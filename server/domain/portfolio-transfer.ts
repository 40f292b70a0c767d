/**
 * A portfolio as an export carries it, and back (DESIGN §11). Pure: no I/O, no clocks.
 *
 * An export's portfolio file is the detail shape without `data`, each file with the `sha256`
 * that names its bytes under `files/`, plus `revisions`: every kept revision in the same shape
 * with its `command` and `changedFields`, oldest first. The CSV is one row per portfolio.
 */
import {
  CSV_COLUMNS,
  type CsvColumn,
  type ExportedCover,
  type ExportedListFile,
  type ExportedPortfolio,
  type ExportedRevision,
  type StoredFile,
} from '../../shared';
import type {
  ImportedRevision,
  RevisionEntry,
  StoredPortfolio,
} from '../repositories/portfolio-repository-contract';
import { filesOf } from './portfolio-files';
import { detailView } from './portfolio-view';

type Exported = Omit<ExportedRevision, 'command' | 'changedFields'>;
type Snapshot = ImportedRevision['snapshot'];

const coverOf = (file: StoredFile): ExportedCover => ({ ...file });
const listFileOf = ({ fileId, ...file }: StoredFile): ExportedListFile => ({
  fileID: fileId,
  ...file,
});

/** A stored record in the export's shape (the detail's spellings, files with their sha256). */
function exportedDetail(record: StoredPortfolio): Exported {
  return {
    ...detailView(record),
    cover: record.cover && coverOf(record.cover),
    draftingProcess: record.draftingProcess.map(listFileOf),
    additionalDocument: record.additionalDocument.map(listFileOf),
    createdBy: record.createdBy,
    modifiedBy: record.modifiedBy,
  };
}

/** `portfolios/<id>.json`: the record now, and its kept revisions (oldest first). */
export function exportedPortfolio(
  record: StoredPortfolio,
  revisions: readonly RevisionEntry[],
): ExportedPortfolio {
  return {
    ...exportedDetail(record),
    revisions: [...revisions]
      .sort((a, b) => a.revision - b.revision)
      .map((entry) => ({
        ...exportedDetail(entry.snapshot),
        modifiedBy: entry.modifiedBy,
        changedTime: entry.modifiedTime,
        command: entry.command,
        changedFields: entry.changedFields,
      })),
  };
}

/** Every blob a portfolio file refers to, now or in a kept revision. */
export function blobsOf(record: StoredPortfolio, revisions: readonly RevisionEntry[]): string[] {
  const all = [record, ...revisions.map((entry) => entry.snapshot)].flatMap(filesOf);
  return [...new Set(all.map((file) => file.sha256))];
}

/** The record an exported portfolio (or revision) stands for; files still as the ZIP names them. */
export function recordOfExported(
  exported: Exported | ExportedRevision | ExportedPortfolio,
): Snapshot {
  // What the export adds to the record (history's own fields) is not part of it.
  const {
    oboutProject,
    createdDate,
    cover,
    draftingProcess,
    additionalDocument,
    command: _command,
    changedFields: _changedFields,
    changedTime: _changedTime,
    revisions: _revisions,
    ...fields
  } = exported as Exported & Partial<ExportedRevision> & Partial<ExportedPortfolio>;
  return {
    ...fields,
    aboutProject: oboutProject,
    createdTime: createdDate,
    cover: cover && { ...cover },
    draftingProcess: draftingProcess.map(({ fileID, ...file }) => ({ fileId: fileID, ...file })),
    additionalDocument: additionalDocument.map(({ fileID, ...file }) => ({
      fileId: fileID,
      ...file,
    })),
  };
}

/**
 * The history an import creates a portfolio with: the kept revisions older than the current one
 * (ascending), then the current record. An export without history (a viewer's) gives the current
 * record alone.
 */
export function importedHistory(exported: ExportedPortfolio): ImportedRevision[] {
  const current = recordOfExported(exported);
  const older = exported.revisions
    .filter((entry) => entry.revision < current.revision)
    .sort((a, b) => a.revision - b.revision);
  const own = exported.revisions.find((entry) => entry.revision === current.revision);
  const seen = new Set<number>();
  const history: ImportedRevision[] = [];
  for (const entry of older) {
    if (seen.has(entry.revision)) continue;
    seen.add(entry.revision);
    history.push({
      revision: entry.revision,
      modifiedTime: entry.changedTime ?? entry.modifiedTime,
      modifiedBy: entry.modifiedBy,
      command: entry.command,
      changedFields: entry.changedFields,
      snapshot: { ...recordOfExported(entry), portfolioId: current.portfolioId },
    });
  }
  history.push({
    revision: current.revision,
    modifiedTime: own?.changedTime ?? current.modifiedTime,
    modifiedBy: current.modifiedBy,
    command: own?.command ?? 'import',
    changedFields: own?.changedFields ?? [],
    snapshot: current,
  });
  return history;
}

// ---- CSV ----

/** Characters a spreadsheet takes as the start of a formula (DESIGN §11). */
const FORMULA_START = /^[=+\-@]/;

/** A cell's text as a spreadsheet may show it: a would-be formula is prefixed with `'`. */
export function csvCell(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/** One CSV row of a portfolio, in CSV_COLUMNS order; arrays joined with `; `. */
export function csvRow(record: StoredPortfolio): string[] {
  const values: Record<CsvColumn, unknown> = {
    ...record,
    cover: record.cover?.originalFilename ?? '',
  };
  return CSV_COLUMNS.map((column) => {
    const value = values[column];
    const text = Array.isArray(value) ? value.join('; ') : String(value ?? '');
    return csvCell(text);
  });
}
