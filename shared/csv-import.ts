/**
 * CSV import (DESIGN §16): which columns of a spreadsheet a curator may map to which fields, and
 * how a header names a field. Derived from the field table, so a field added there is importable
 * (or not) by its row alone; shared by the server and the Import page's mapping screen.
 */
import { PORTFOLIO_FIELDS, fieldKeysWhere, type FieldKey } from './portfolio-fields';

/**
 * The fields a CSV row sets: what an editor's or an admin's body sets (not files, state or
 * bookkeeping), plus `portfolioId`, the key of an update or a new portfolio's own id.
 */
export const CSV_FIELDS: FieldKey[] = [
  'portfolioId',
  ...fieldKeysWhere((row) => row.writer === 'editor' || row.writer === 'admin'),
];

/** Fields whose cell holds a list: entries are separated by this character. */
export const CSV_LIST_SEPARATOR = ';';

/** The keys a row is matched to a portfolio by (`key=` of the import). */
export const CSV_KEYS = ['portfolioId', 'memberBarcode,projectTitle'] as const;
export type CsvKey = (typeof CSV_KEYS)[number];

/** The answer's per-row actions. */
export const CSV_ACTIONS = ['create', 'update', 'unchanged', 'refused'] as const;
export type CsvAction = (typeof CSV_ACTIONS)[number];

const normalized = (text: string) => text.trim().replace(/\s+/g, ' ').toLowerCase();

const BY_NAME = new Map<string, FieldKey>(
  CSV_FIELDS.flatMap((key) => [
    [normalized(key), key],
    [normalized(PORTFOLIO_FIELDS[key].label), key],
  ]),
);

/**
 * The field a column header names, by its key or its label, ignoring case and spaces around
 * ("Project title", "projecttitle", " PROJECT TITLE "); undefined for any other header.
 */
export function csvFieldOfHeader(header: string): FieldKey | undefined {
  return BY_NAME.get(normalized(header));
}

/** Whether only an admin may set the field (certificates, staff pick). */
export function isAdminCsvField(key: FieldKey): boolean {
  return PORTFOLIO_FIELDS[key].writer === 'admin';
}

/**
 * The mapping used when the caller gives none: each header that names a field maps to it (the
 * first such column wins). Admin-only fields are left out for a caller who is not an admin, so
 * an export CSV imports for an editor too.
 */
export function automaticCsvMapping(
  headers: readonly string[],
  isAdmin: boolean,
): Record<string, FieldKey> {
  const mapping: Record<string, FieldKey> = {};
  const taken = new Set<FieldKey>();
  for (const header of headers) {
    const field = csvFieldOfHeader(header);
    if (!field || taken.has(field) || (isAdminCsvField(field) && !isAdmin)) continue;
    if (header in mapping) continue;
    mapping[header] = field;
    taken.add(field);
  }
  return mapping;
}

const SEPARATORS = [',', ';', '\t'] as const;

/**
 * The cell separator of a CSV from its start: the one of `,`, `;` and tab its header row holds
 * most of, quoted parts aside (`,` on a tie). The server reads files with it and the Import page
 * previews them with it, so both read the same cells.
 */
export function csvSeparatorOf(text: string): string {
  const counts = new Map<string, number>(SEPARATORS.map((s) => [s, 0]));
  let quoted = false;
  for (const char of text) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && (char === '\n' || char === '\r')) break;
    else if (!quoted && counts.has(char)) counts.set(char, counts.get(char)! + 1);
  }
  let best = ',';
  for (const separator of SEPARATORS)
    if (counts.get(separator)! > counts.get(best)!) best = separator;
  return best;
}
