import {
  ADMIN_FIELDS,
  initialValueOf,
  LIMITS,
  PORTFOLIO_FIELDS,
  TEXT_LIMITS,
  type CreatePortfolioBody,
  type FieldKey,
  type FieldRow,
  type KeysWith,
  type PortfolioDetail,
  type UpdatePortfolioBody,
} from '../../../shared';
import { tooLongMessage } from '../components/character-count';

type Fields = typeof PORTFOLIO_FIELDS;

/** The edit form's fields: the field table's rows with a place in the form. */
export type FormField = KeysWith<'form'>;

/** A form field's value: tag lists as arrays, flags as booleans, the rest as text. */
type FormValue<K extends FormField> = Fields[K]['kind'] extends 'tags'
  ? string[]
  : Fields[K]['kind'] extends 'flag'
    ? boolean
    : string;

/** The edit form's state: every field of the form. */
export type PortfolioFormValues = { [K in FormField]: FormValue<K> };
export type FieldErrors = Partial<Record<FormField, string>>;

const formRow = (field: FormField): FieldRow => PORTFOLIO_FIELDS[field];

/** The form's fields in the form's order. */
const FORM_FIELDS = (Object.keys(PORTFOLIO_FIELDS) as FieldKey[])
  .filter((key): key is FormField => (PORTFOLIO_FIELDS[key] as FieldRow).form !== undefined)
  .sort((a, b) => formRow(a).form! - formRow(b).form!);
const formFieldsWhere = <K extends FormField>(test: (row: FieldRow) => boolean) =>
  FORM_FIELDS.filter((field) => test(formRow(field))) as K[];

/** Labels by field, in the form's order. */
export const FIELD_LABELS = Object.fromEntries(
  FORM_FIELDS.map((field) => [field, formRow(field).label]),
) as Record<FormField, string>;

type TextField = FormField & KeysWith<'kind', 'text' | 'html'>;
export const TEXT_FIELDS = formFieldsWhere<TextField>(
  (row) => row.kind === 'text' || row.kind === 'html',
);
export const TAG_FIELDS = formFieldsWhere<FormField & KeysWith<'kind', 'tags'>>(
  (row) => row.kind === 'tags',
);
export const REQUIRED_FIELDS = formFieldsWhere<FormField & KeysWith<'required', true>>(
  (row) => row.required === true,
);
export const ADMIN_FORM_FIELDS: readonly FormField[] = ADMIN_FIELDS;
/** The editor's fields: what every update sends (admins add theirs). */
const EDITOR_FIELDS = formFieldsWhere((row) => row.writer === 'editor');

export function maxLengthOf(field: TextField): number {
  return TEXT_LIMITS[field];
}

const MEMBER_BARCODE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export function emptyValues(): PortfolioFormValues {
  return Object.fromEntries(
    FORM_FIELDS.map((field) => [field, initialValueOf(field)]),
  ) as PortfolioFormValues;
}

/** The detail's key of a form field: aboutProject has the interface's spelling there. */
const detailKeyOf = (field: FormField) => (field === 'aboutProject' ? 'oboutProject' : field);

export function valuesFromDetail(detail: PortfolioDetail): PortfolioFormValues {
  return Object.fromEntries(
    FORM_FIELDS.map((field) => {
      const value = detail[detailKeyOf(field)];
      return [field, Array.isArray(value) ? [...value] : value];
    }),
  ) as PortfolioFormValues;
}

/** The same checks the server makes, so most mistakes show before a round trip. */
export function validate(values: PortfolioFormValues): FieldErrors {
  const errors: FieldErrors = {};
  for (const field of TEXT_FIELDS) {
    if (values[field].length > maxLengthOf(field))
      errors[field] = tooLongMessage(FIELD_LABELS[field], values[field].length, maxLengthOf(field));
  }
  for (const field of REQUIRED_FIELDS) {
    if (!values[field].trim()) errors[field] = `${FIELD_LABELS[field]} is required.`;
  }
  if (!errors.memberBarcode && !MEMBER_BARCODE.test(values.memberBarcode)) {
    errors.memberBarcode =
      'Use letters, digits, ".", "-" and "_", starting with a letter or digit.';
  }
  for (const field of TAG_FIELDS) {
    if (values[field].length > LIMITS.tags) errors[field] = `At most ${LIMITS.tags} entries.`;
    else if (values[field].some((tag) => tag.length > LIMITS.tag))
      errors[field] = `Each entry has at most ${LIMITS.tag} characters.`;
  }
  return errors;
}

/** A field's value as a body sends it: required texts trimmed. */
function bodyValue(values: PortfolioFormValues, field: FormField): unknown {
  const value = values[field];
  return formRow(field).required && typeof value === 'string' ? value.trim() : value;
}

/** A create body: optional fields are left out when empty. */
export function toCreateBody(values: PortfolioFormValues): CreatePortfolioBody {
  const body: Record<string, unknown> = {};
  for (const field of EDITOR_FIELDS) {
    const value = bodyValue(values, field);
    const empty = Array.isArray(value) ? value.length === 0 : value === '';
    if (formRow(field).required || !empty) body[field] = value;
  }
  return body as CreatePortfolioBody;
}

/**
 * An update body. Every editor field is sent, so an emptied field is cleared (DESIGN §3);
 * admin fields only by admins, who alone may send them.
 */
export function toUpdateBody(
  values: PortfolioFormValues,
  options: { admin: boolean; revision?: number },
): UpdatePortfolioBody {
  const fields = options.admin ? [...EDITOR_FIELDS, ...ADMIN_FORM_FIELDS] : EDITOR_FIELDS;
  const body: Record<string, unknown> = {};
  for (const field of fields) body[field] = bodyValue(values, field);
  if (options.revision !== undefined) body.revision = options.revision;
  return body as UpdatePortfolioBody;
}

function sameValue(a: PortfolioFormValues[FormField], b: PortfolioFormValues[FormField]): boolean {
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((item, index) => item === b[index]);
  return a === b;
}

/** The fields whose values differ, in form order; admin fields only when the user may edit them. */
export function changedFields(
  a: PortfolioFormValues,
  b: PortfolioFormValues,
  includeAdmin = true,
): FormField[] {
  return FORM_FIELDS.filter(
    (field) =>
      (includeAdmin || !ADMIN_FORM_FIELDS.includes(field)) && !sameValue(a[field], b[field]),
  );
}

/** How a value reads in a "what changed" list. */
export function displayValue(value: PortfolioFormValues[FormField]): string {
  if (Array.isArray(value)) return value.length ? value.join(', ') : '(none)';
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  if (!value) return '(empty)';
  return value.length > 160 ? `${value.slice(0, 160)}…` : value;
}

/** The server names aboutProject by either spelling; forms know one. */
export function formFieldOf(serverField: string): FormField | null {
  const field = serverField === 'oboutProject' ? 'aboutProject' : serverField;
  return field in FIELD_LABELS ? (field as FormField) : null;
}
