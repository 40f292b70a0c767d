import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { CsvError, parse, type Options } from 'csv-parse';
import { csvSeparatorOf } from '../../shared';
import { ApiError } from '../errors';

/**
 * Reading an import CSV from a file, streamed (DESIGN §16): never the whole file in memory. UTF-8
 * (a BOM is dropped), `,`, `;` or tab between cells as its header row shows, RFC 4180 quotes
 * (cells may hold the separator, quotes and line breaks), and a bound on one row's size.
 */

/** The most one row may hold, in characters: far over every field's limits together. */
export const MAX_ROW_CHARS = 1_000_000;

/** Bytes looked at to tell the separator and that the file is text. */
const SNIFF_BYTES = 64 * 1024;

export interface CsvRecord {
  /** The data row, counted from 1 (the header is row 0). */
  row: number;
  cells: string[];
}

/** The file's first bytes: refused when they are not UTF-8 text; the separator they show. */
export async function sniffCsv(path: string): Promise<{ separator: string }> {
  const file = await open(path, 'r');
  let head: Buffer;
  try {
    const buffer = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await file.read(buffer, 0, SNIFF_BYTES, 0);
    head = buffer.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
  if (
    head.length === 0 ||
    head
      .toString('utf8')
      .replace(/^\uFEFF/, '')
      .trim() === ''
  ) {
    throw new ApiError(
      'INVALID_CSV',
      'The file is empty: a CSV import needs a header row naming the columns, then one row per portfolio.',
    );
  }
  if (head.includes(0) || !isUtf8Prefix(head)) {
    throw new ApiError(
      'INVALID_CSV',
      'The file is not CSV text (UTF-8). From a spreadsheet, save it as "CSV UTF-8" and import that file.',
    );
  }
  return { separator: csvSeparatorOf(head.toString('utf8').replace(/^\uFEFF/, '')) };
}

/** UTF-8 up to a character cut at the end of the sniffed bytes. */
function isUtf8Prefix(bytes: Buffer): boolean {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  try {
    decoder.decode(bytes, { stream: true });
    return true;
  } catch {
    return false;
  }
}

/** csv-parse's options for a file whose separator is known. */
function parserOptions(separator: string): Options {
  return {
    delimiter: separator,
    bom: true,
    // Each row's cell count is checked against the header's, refusing that row only.
    relax_column_count: true,
    skip_empty_lines: true,
    max_record_size: MAX_ROW_CHARS,
  };
}

/**
 * The records of the CSV at `path`: the header row first, then the data rows in batches of up to
 * `batchSize`. A broken file (an unclosed quote, a row over the size bound) fails with its 4xx,
 * saying on which line.
 */
export async function* csvBatches(
  path: string,
  separator: string,
  batchSize: number,
): AsyncGenerator<{ header: string[] } | { batch: CsvRecord[] }> {
  const parser = createReadStream(path).pipe(parse(parserOptions(separator)));
  let row = -1;
  let batch: CsvRecord[] = [];
  try {
    for await (const cells of parser as AsyncIterable<string[]>) {
      row++;
      if (row === 0) {
        yield { header: cells.map((cell) => cell.trim()) };
        continue;
      }
      batch.push({ row, cells });
      if (batch.length >= batchSize) {
        yield { batch };
        batch = [];
      }
    }
  } catch (error) {
    throw csvErrorOf(error);
  }
  if (row < 0) {
    throw new ApiError('INVALID_CSV', 'The file holds no rows: a CSV import needs a header row.');
  }
  if (batch.length > 0) yield { batch };
}

/**
 * Reads the whole file once, checking only that it is a well-formed CSV, so a broken file is
 * refused before any row of it is written. Answers the number of data rows.
 */
export async function checkCsv(path: string, separator: string): Promise<number> {
  const parser = createReadStream(path).pipe(parse(parserOptions(separator)));
  let records = 0;
  try {
    for await (const _ of parser as AsyncIterable<string[]>) records++;
  } catch (error) {
    throw csvErrorOf(error);
  }
  return Math.max(0, records - 1);
}

function csvErrorOf(error: unknown): unknown {
  if (!(error instanceof CsvError)) return error;
  const line = (error as CsvError & { lines?: number }).lines;
  const where = line ? ` (line ${line} of the file)` : '';
  if (error.code === 'CSV_MAX_RECORD_SIZE') {
    return new ApiError(
      'CSV_ROW_TOO_LARGE',
      `A row of the CSV is longer than ${MAX_ROW_CHARS.toLocaleString('en')} characters${where}, ` +
        'the most one row may hold; nothing was imported. A quote left open can make the rest of the file one row.',
    );
  }
  if (error.code === 'CSV_QUOTE_NOT_CLOSED') {
    return new ApiError(
      'INVALID_CSV',
      `A quoted cell is never closed${where}; nothing was imported.`,
    );
  }
  return new ApiError(
    'INVALID_CSV',
    `The CSV cannot be read${where}: a quote is misplaced or the file is not CSV; nothing was imported.`,
  );
}
