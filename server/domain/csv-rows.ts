import {
  automaticCsvMapping,
  CSV_FIELDS,
  CSV_LIST_SEPARATOR,
  fieldKeysWith,
  isAdminCsvField,
  PORTFOLIO_FIELDS,
  type CsvKey,
  type FieldKey,
  type PortfolioRecord,
} from '../../shared';
import { ApiError } from '../errors';

/**
 * CSV import rows (DESIGN §16), pure: which column feeds which field, what a cell means, and the
 * bodies a row makes for the service, which validates them as it validates the API's.
 */

/** An error of one row, as the answer lists it. */
export interface RowError {
  field: string;
  message: string;
}

/** A mapping as the caller sent it (`mapping=` JSON), checked before the body is read. */
export type RequestedMapping = Record<string, FieldKey>;

const CSV_FIELD_SET = new Set<string>(CSV_FIELDS);
const FILE_FIELDS = new Set<string>(fieldKeysWith('writer', 'files'));

function badMapping(message: string): ApiError {
  return new ApiError('INVALID_QUERY', message, [{ field: 'querystring.mapping', message }]);
}

/**
 * The `mapping` query parameter: a JSON object of column header → field. Every field must be one
 * a CSV sets, at most one column per field; an admin-only field needs an admin (403, before the
 * body is read).
 */
export function parseMapping(raw: string | undefined, isAdmin: boolean): RequestedMapping | null {
  if (raw === undefined || raw.trim() === '') return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw badMapping(
      'The mapping is not valid JSON; send an object like {"Title":"projectTitle"}.',
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw badMapping(
      'The mapping is an object of column name to field, like {"Title":"projectTitle"}.',
    );
  }
  const mapping: RequestedMapping = {};
  const taken = new Map<string, string>();
  for (const [column, field] of Object.entries(parsed)) {
    if (typeof field !== 'string' || !CSV_FIELD_SET.has(field)) {
      const name = typeof field === 'string' ? field : JSON.stringify(field);
      throw badMapping(
        FILE_FIELDS.has(name)
          ? `The column "${column}" maps to "${name}": files are not set from a CSV; add them to each portfolio, or bring a folder of them with a folder ingest.`
          : `The column "${column}" maps to "${name}", which is not a field a CSV can set. The fields are: ${CSV_FIELDS.join(', ')}.`,
      );
    }
    const key = field as FieldKey;
    const other = taken.get(key);
    if (other !== undefined) {
      throw badMapping(
        `The columns "${other}" and "${column}" both map to ${key}; map one of them.`,
      );
    }
    taken.set(key, column);
    mapping[column] = key;
  }
  const adminOnly = Object.values(mapping).filter(isAdminCsvField);
  if (adminOnly.length > 0 && !isAdmin) {
    throw new ApiError(
      'FORBIDDEN_FIELD',
      `Only an admin may set ${adminOnly.map((key) => PORTFOLIO_FIELDS[key].label.toLowerCase()).join(', ')}; leave those columns out of the mapping.`,
      adminOnly.map((key) => ({
        field: `querystring.mapping.${key}`,
        message: 'needs the admin role',
      })),
    );
  }
  return mapping;
}

/** The mapping applied to a header row: the field of each column, in column order. */
export interface ColumnPlan {
  /** The field of each column; undefined for a column that is not read. */
  fields: Array<FieldKey | undefined>;
  /** The mapping used, header → field. */
  used: Record<string, FieldKey>;
  /** Headers that map to no field. */
  ignored: string[];
  key: CsvKey;
}

/**
 * Plans the columns of `header`: the caller's mapping (each of its columns must be in the header)
 * or, without one, the headers that name a field. A header that maps to nothing at all is not
 * a CSV of portfolios: refused whole.
 */
export function planColumns(
  header: readonly string[],
  requested: RequestedMapping | null,
  isAdmin: boolean,
  key: CsvKey | undefined,
): ColumnPlan {
  const mapping = requested ?? automaticCsvMapping(header, isAdmin);
  if (requested) {
    const missing = Object.keys(requested).filter((column) => !header.includes(column));
    if (missing.length > 0) {
      throw badMapping(
        `The mapping names the column${missing.length > 1 ? 's' : ''} ${missing.map((c) => `"${c}"`).join(', ')}, which the CSV's header row does not have.`,
      );
    }
  }
  const fields = header.map((column) => mapping[column]);
  if (fields.every((field) => field === undefined)) {
    throw new ApiError(
      'INVALID_CSV',
      'No column of the CSV is one this app knows: the first row must name the columns, such as ' +
        '"Member barcode", "Category", "Project title" and "Project detail" (or send a mapping).',
    );
  }
  const mapped = new Set(fields);
  const chosenKey: CsvKey =
    key ?? (mapped.has('portfolioId') ? 'portfolioId' : 'memberBarcode,projectTitle');
  for (const needed of chosenKey.split(',') as FieldKey[]) {
    if (!mapped.has(needed)) {
      throw badMapping(
        `Rows are matched by ${chosenKey}, but no column maps to ${needed}; map one, or choose another key.`,
      );
    }
  }
  return {
    fields,
    used: Object.fromEntries(
      header.flatMap((column, index) => (fields[index] ? [[column, fields[index]]] : [])),
    ),
    ignored: header.filter((_, index) => fields[index] === undefined),
    key: chosenKey,
  };
}

/** A cell the export guarded against spreadsheet formulas (`'=…`) reads back as it was. */
const GUARDED_FORMULA = /^'[=+\-@\t\r]/;

const YES = new Set(['true', 'yes', 'y', '1']);
const NO = new Set(['false', 'no', 'n', '0']);

/** One row's values by field, or the errors of cells that mean nothing for their field. */
export function rowValues(
  cells: readonly string[],
  plan: ColumnPlan,
): { values: Partial<Record<FieldKey, unknown>>; errors: RowError[] } {
  const values: Partial<Record<FieldKey, unknown>> = {};
  const errors: RowError[] = [];
  if (cells.length !== plan.fields.length) {
    errors.push({
      field: '',
      message: `The row has ${cells.length} cells where the header has ${plan.fields.length}; a quote may be missing.`,
    });
    return { values, errors };
  }
  plan.fields.forEach((field, index) => {
    if (!field) return;
    let text = cells[index]!.trim();
    if (GUARDED_FORMULA.test(text)) text = text.slice(1);
    switch (PORTFOLIO_FIELDS[field].kind) {
      case 'tags':
        values[field] = text
          .split(CSV_LIST_SEPARATOR)
          .map((entry) => entry.trim())
          .filter((entry) => entry !== '');
        return;
      case 'flag': {
        const word = text.toLowerCase();
        if (word === '') return;
        if (YES.has(word)) values[field] = true;
        else if (NO.has(word)) values[field] = false;
        else {
          errors.push({
            field,
            message: `${PORTFOLIO_FIELDS[field].label} is yes or no (true or false), not "${text.slice(0, 40)}".`,
          });
        }
        return;
      }
      case 'id':
        if (text !== '') values[field] = text;
        return;
      default:
        values[field] = text;
    }
  });
  return { values, errors };
}

/** The string a row is matched by (undefined: the row names no portfolio to match). */
export function rowKey(
  values: Partial<Record<FieldKey, unknown>>,
  key: CsvKey,
): string | undefined {
  if (key === 'portfolioId') return values.portfolioId as string | undefined;
  const barcode = values.memberBarcode;
  const title = values.projectTitle;
  if (typeof barcode !== 'string' || typeof title !== 'string' || !barcode || !title)
    return undefined;
  return barcodeTitleKey(barcode, title);
}

export function barcodeTitleKey(barcode: string, title: string): string {
  return JSON.stringify([barcode, title]);
}

/** The key of a stored portfolio, as rowKey makes it of a row. */
export function recordKey(record: PortfolioRecord, key: CsvKey): string {
  return key === 'portfolioId'
    ? record.portfolioId
    : barcodeTitleKey(record.memberBarcode, record.projectTitle);
}

const REQUIRED = fieldKeysWith('required', true);

/**
 * The bodies of a row: a create's (the editor's fields and the row's own id) and the admin-only
 * fields, which a create does not take and an update after it sets.
 */
export function createBodies(values: Partial<Record<FieldKey, unknown>>): {
  create: Record<string, unknown>;
  admin: Record<string, unknown>;
} {
  const create: Record<string, unknown> = {};
  const admin: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(values) as Array<[FieldKey, unknown]>) {
    if (isAdminCsvField(field)) admin[field] = value;
    else create[field] = value;
  }
  return { create, admin };
}

/** An update's body: the portfolio's required fields, then the row's values (not its key id). */
export function updateBody(
  current: PortfolioRecord,
  values: Partial<Record<FieldKey, unknown>>,
): Record<string, unknown> {
  const body: Record<string, unknown> = Object.fromEntries(
    REQUIRED.map((field) => [field, current[field]]),
  );
  for (const [field, value] of Object.entries(values)) {
    if (field !== 'portfolioId') body[field] = value;
  }
  return body;
}

/** An API error as the row errors of the answer: the fields it names, in plain words. */
export function rowErrorsOf(error: ApiError): RowError[] {
  const fieldOf = (path: string | undefined) =>
    (path ?? '').replace(/^(body|querystring)\.?/, '').split(/[./]/)[0] ?? '';
  if (error.code === 'VALIDATION_FAILED' && error.details.length > 0) {
    // One message per field: the first of its failures says what to fix.
    const byField = new Map<string, string>();
    for (const detail of error.details) {
      const field = fieldOf(detail.field);
      if (!byField.has(field)) byField.set(field, detail.message);
    }
    return [...byField].map(([field, message]) => ({ field, message }));
  }
  return [{ field: fieldOf(error.details[0]?.field), message: error.message }];
}
