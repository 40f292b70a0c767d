import { parse } from 'csv-parse/browser/esm/sync';
import { csvSeparatorOf } from '../../../shared';

/** Bytes of the file read for the preview: the header and the first rows, never the whole file. */
const PREVIEW_BYTES = 256 * 1024;

export interface CsvPreview {
  header: string[];
  /** The first data rows, as the server will read them. */
  rows: string[][];
}

/**
 * The header and first `rows` rows of a CSV, read in the browser with the separator the server
 * will choose (shared/csv-import.ts), so the mapping screen shows the cells the import will see.
 * Throws an Error in plain words when the start of the file is not a CSV.
 */
export async function previewCsv(file: Blob, rows = 5): Promise<CsvPreview> {
  const text = (await file.slice(0, PREVIEW_BYTES).text()).replace(/^\uFEFF/, '');
  if (text.trim() === '') throw new Error('The file is empty.');
  if (text.includes('\u0000') || text.includes('\uFFFD')) {
    throw new Error('This file is not CSV text. From a spreadsheet, save it as “CSV UTF-8”.');
  }
  let records: string[][];
  try {
    records = parse(text, {
      delimiter: csvSeparatorOf(text),
      relax_column_count: true,
      skip_empty_lines: true,
      // The slice may end inside a row: only the rows wholly inside it are read.
      to: rows + 1,
    });
  } catch {
    throw new Error('The start of this file cannot be read as CSV: a quote may be misplaced.');
  }
  const [header, ...data] = records;
  if (!header) throw new Error('The file is empty.');
  return { header: header.map((cell) => cell.trim()), rows: data };
}
