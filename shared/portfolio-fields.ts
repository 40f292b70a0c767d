/**
 * The one table of a portfolio's fields (issue 25): each row says once what a field is — its
 * schema and limit, its label, its kind, who writes it, whether create and update echo it, how
 * the list filters and orders by it, which PostgreSQL column holds it, and what a restore and a
 * sync merge do with it. The record schema, the request bodies, the echo, filter and order keys,
 * the merge kinds, the embedded index's partitions, the SQL column maps and the forms are derived
 * from it; adding a field is one row here (plus a migration where a column is new).
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { Identifier, OptionalText, RequiredText, TagList, Timestamp } from './schemas/common';
import { StoredFileSchema } from './schemas/file';
import { AppliedMutationSchema, ConflictSchema } from './schemas/sync';

/** How a field's value is shaped, read and merged. */
export type FieldKind =
  'id' | 'text' | 'html' | 'tags' | 'flag' | 'cover' | 'files' | 'time' | 'revision' | 'record';

/**
 * What a field is to the portfolio: `content` is what a restore brings back and sync merges;
 * `state` (published, active) sync merges but a restore keeps; the rest is identity and
 * bookkeeping that every change moves or that the server keeps.
 */
export type FieldPart = 'identity' | 'content' | 'state' | 'bookkeeping';

/**
 * Who sets a field: an editor's body (create and update), an admin's update, a command
 * (publish, activate…), the files API, or the server alone.
 */
export type FieldWriter = 'editor' | 'admin' | 'command' | 'files' | 'server';

/** How the list's `filter` matches a field (DESIGN §4). */
export type FilterKind = 'exact' | 'array' | 'flag' | 'contains';

export interface FieldRow {
  readonly schema: TSchema;
  /** What a person calls it: form labels, the compare view, messages. */
  readonly label: string;
  readonly kind: FieldKind;
  readonly part: FieldPart;
  readonly writer: FieldWriter;
  /** Text limit in characters, where the field is text. */
  readonly maxLength?: number;
  /** An editor must give it on create and on a full update. */
  readonly required?: true;
  /** Create and update answer it (the interface's echo). */
  readonly echo?: true;
  /** The list filters by it; staff-only filters are hidden from viewers. */
  readonly filter?: { readonly kind: FilterKind; readonly rank: number; readonly staff?: true };
  /**
   * The facets endpoint counts its values, and the forms and gallery offer them as pick-lists
   * (DESIGN §16); `rank` is its place among the facet keys. `folded`: values that differ only in
   * case are one value (the list's filter ignores their case too).
   */
  readonly facet?: { readonly rank: number; readonly folded?: true };
  /** The list orders by it; `rank` is its place among the order keys. */
  readonly order?: { readonly rank: number };
  /** `field` may ask for it on the list (the gallery's cards, beyond the interface's keys). */
  readonly listed?: true;
  /** The PostgreSQL column of the live row that holds it as is. */
  readonly column?: string;
  /** Every change moves it: never listed as a changed field. */
  readonly untracked?: true;
  /** The detail page and the compare view show it, at this place (1 first). */
  readonly shown?: number;
  /** The edit form has it, at this place (1 first). */
  readonly form?: number;
  /** Absent from a record until it has a value. */
  readonly optional?: true;
  /** A new portfolio's value, where not the kind's empty value. */
  readonly initial?: unknown;
  /**
   * The public showcase shows it (DESIGN §15) once the portfolio is published and active; files
   * only as images. Nothing else of a portfolio ever leaves through the showcase.
   */
  readonly public?: true;
}

const row = <const R extends FieldRow>(r: R): R => r;

const MEMBER_BARCODE_LIMIT = 64;
/** A member barcode: letters, digits, ".", "-" and "_", starting with a letter or digit. */
const MemberBarcode = Type.String({
  minLength: 1,
  maxLength: MEMBER_BARCODE_LIMIT,
  pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$',
  description: 'Letters, digits, ".", "-" and "_"',
  'x-words': {
    pattern:
      'A member barcode uses letters, digits, dots, dashes and underscores, and starts with a letter or digit.',
    minLength: 'The member barcode is required.',
    maxLength: `A member barcode has at most ${MEMBER_BARCODE_LIMIT} characters.`,
  },
});

/** The table, in the record's order. */
export const PORTFOLIO_FIELDS = {
  portfolioId: row({
    public: true,
    schema: Identifier,
    label: 'Portfolio id',
    kind: 'id',
    part: 'identity',
    writer: 'server',
    echo: true,
    column: 'portfolio_id',
  }),
  memberBarcode: row({
    schema: MemberBarcode,
    label: 'Member barcode',
    shown: 2,
    form: 2,
    kind: 'text',
    part: 'content',
    writer: 'editor',
    maxLength: MEMBER_BARCODE_LIMIT,
    required: true,
    echo: true,
    filter: { kind: 'exact', rank: 1 },
    listed: true,
    column: 'member_barcode',
  }),
  category: row({
    public: true,
    schema: RequiredText(100),
    label: 'Category',
    shown: 3,
    form: 3,
    kind: 'text',
    part: 'content',
    writer: 'editor',
    maxLength: 100,
    required: true,
    echo: true,
    filter: { kind: 'exact', rank: 2 },
    facet: { rank: 1, folded: true },
    order: { rank: 4 },
    listed: true,
    column: 'category',
  }),
  relativeCategory: row({
    public: true,
    schema: TagList(),
    label: 'Related categories',
    shown: 4,
    form: 4,
    kind: 'tags',
    part: 'content',
    writer: 'editor',
    echo: true,
    filter: { kind: 'array', rank: 3 },
    listed: true,
    column: 'relative_category',
  }),
  projectTitle: row({
    public: true,
    schema: RequiredText(200),
    label: 'Project title',
    shown: 1,
    form: 1,
    kind: 'text',
    part: 'content',
    writer: 'editor',
    maxLength: 200,
    required: true,
    echo: true,
    filter: { kind: 'contains', rank: 7 },
    order: { rank: 3 },
    column: 'project_title',
  }),
  aboutProject: row({
    public: true,
    schema: OptionalText(20_000),
    label: 'About the project',
    shown: 9,
    form: 6,
    kind: 'text',
    part: 'content',
    writer: 'editor',
    maxLength: 20_000,
    echo: true,
  }),
  projectDetail: row({
    public: true,
    schema: RequiredText(20_000),
    label: 'Project detail',
    shown: 10,
    form: 5,
    kind: 'text',
    part: 'content',
    writer: 'editor',
    maxLength: 20_000,
    required: true,
    echo: true,
  }),
  projectLanuching: row({
    schema: OptionalText(100),
    label: 'Project launching',
    shown: 13,
    form: 7,
    kind: 'text',
    part: 'content',
    writer: 'editor',
    maxLength: 100,
    echo: true,
  }),
  readyToBuy: row({
    public: true,
    schema: OptionalText(100),
    label: 'Ready to buy',
    shown: 14,
    form: 8,
    kind: 'text',
    part: 'content',
    writer: 'editor',
    maxLength: 100,
    echo: true,
    filter: { kind: 'exact', rank: 4 },
    facet: { rank: 4 },
    column: 'ready_to_buy',
  }),
  occasion: row({
    public: true,
    schema: TagList(),
    label: 'Occasion',
    shown: 15,
    form: 9,
    kind: 'tags',
    part: 'content',
    writer: 'editor',
    echo: true,
    facet: { rank: 3 },
    column: 'occasion',
  }),
  referenceStyling: row({
    public: true,
    schema: TagList(),
    label: 'Reference styling',
    shown: 16,
    form: 10,
    kind: 'tags',
    part: 'content',
    writer: 'editor',
    echo: true,
  }),
  generalTag: row({
    public: true,
    schema: TagList(),
    label: 'Tags',
    shown: 17,
    form: 11,
    kind: 'tags',
    part: 'content',
    writer: 'editor',
    echo: true,
    facet: { rank: 2 },
    column: 'general_tag',
  }),
  certificateByOrg: row({
    public: true,
    schema: TagList(),
    label: 'Certificates',
    shown: 18,
    form: 12,
    kind: 'tags',
    part: 'content',
    writer: 'admin',
    filter: { kind: 'array', rank: 5 },
    facet: { rank: 5 },
    column: 'certificate_by_org',
  }),
  certificateDesc: row({
    public: true,
    schema: OptionalText(50_000, 'HTML; sanitized'),
    label: 'Certificate description',
    shown: 19,
    form: 13,
    kind: 'html',
    part: 'content',
    writer: 'admin',
    maxLength: 50_000,
  }),
  staffPick: row({
    public: true,
    schema: Type.Boolean(),
    label: 'Staff pick',
    shown: 7,
    form: 14,
    kind: 'flag',
    part: 'content',
    writer: 'admin',
    filter: { kind: 'flag', rank: 6 },
    order: { rank: 5 },
    listed: true,
    column: 'staff_pick',
  }),
  cover: row({
    public: true,
    schema: Type.Union([StoredFileSchema, Type.Null()]),
    label: 'Cover',
    shown: 8,
    kind: 'cover',
    part: 'content',
    writer: 'files',
  }),
  draftingProcess: row({
    public: true,
    schema: Type.Array(StoredFileSchema),
    label: 'Drafting process',
    shown: 11,
    kind: 'files',
    part: 'content',
    writer: 'files',
  }),
  additionalDocument: row({
    schema: Type.Array(StoredFileSchema),
    label: 'Additional documents',
    shown: 12,
    kind: 'files',
    part: 'content',
    writer: 'files',
  }),
  createdTime: row({
    schema: Timestamp,
    label: 'Created',
    kind: 'time',
    part: 'bookkeeping',
    writer: 'server',
    order: { rank: 1 },
    listed: true,
    column: 'created_time',
  }),
  modifiedTime: row({
    schema: Timestamp,
    label: 'Last changed',
    kind: 'time',
    part: 'bookkeeping',
    writer: 'server',
    order: { rank: 2 },
    listed: true,
    column: 'modified_time',
    untracked: true,
  }),
  published: row({
    schema: Type.Boolean(),
    label: 'Published',
    shown: 5,
    kind: 'flag',
    part: 'state',
    writer: 'command',
    filter: { kind: 'flag', rank: 8, staff: true },
    listed: true,
    column: 'published',
  }),
  active: row({
    schema: Type.Boolean(),
    label: 'Active',
    shown: 6,
    kind: 'flag',
    part: 'state',
    writer: 'command',
    filter: { kind: 'flag', rank: 9, staff: true },
    listed: true,
    column: 'active',
    initial: true,
  }),
  revision: row({
    schema: Type.Integer({ minimum: 1 }),
    label: 'Revision',
    kind: 'revision',
    part: 'bookkeeping',
    writer: 'server',
    echo: true,
    listed: true,
    column: 'revision',
    untracked: true,
    initial: 1,
  }),
  /** Sync conflicts waiting for a person (DESIGN §10); absent when none. */
  conflicts: row({
    schema: Type.Optional(Type.Array(ConflictSchema)),
    label: 'Sync conflicts',
    kind: 'record',
    part: 'bookkeeping',
    writer: 'server',
    optional: true,
  }),
  /** Mutations of replicas this record took in, so a retried one is answered, not re-applied. */
  syncApplied: row({
    schema: Type.Optional(Type.Array(AppliedMutationSchema)),
    label: 'Applied sync changes',
    kind: 'record',
    part: 'bookkeeping',
    writer: 'server',
    optional: true,
    untracked: true,
  }),
} as const;

type Fields = typeof PORTFOLIO_FIELDS;
export type FieldKey = keyof Fields;

/** The keys whose row has `property` (set, or equal to `value` when given), in table order. */
export type KeysWith<P extends keyof FieldRow, V = unknown> = {
  [K in FieldKey]: Fields[K] extends { readonly [Q in P]: V } ? K : never;
}[FieldKey];

const rows = Object.entries(PORTFOLIO_FIELDS) as Array<[FieldKey, FieldRow]>;

/** The keys of the rows `test` accepts, in table order. */
export function fieldKeysWhere(test: (row: FieldRow) => boolean): FieldKey[] {
  return rows.filter(([, r]) => test(r)).map(([key]) => key);
}

/** Keys of the rows with `property` set to `value`, typed as the type-level `KeysWith`. */
export function fieldKeysWith<P extends keyof FieldRow, const V extends FieldRow[P]>(
  property: P,
  value?: V,
): Array<KeysWith<P, V extends undefined ? unknown : V>> {
  return fieldKeysWhere((r) =>
    value === undefined ? r[property] !== undefined : r[property] === value,
  ) as Array<KeysWith<P, V extends undefined ? unknown : V>>;
}

/** The keys of the rows with `property`, sorted by its `rank` (filter and order keys). */
export function rankedKeys<P extends 'filter' | 'order' | 'facet'>(
  property: P,
): Array<KeysWith<P>> {
  return rows
    .filter(([, r]) => r[property] !== undefined)
    .sort(([, a], [, b]) => a[property]!.rank - b[property]!.rank)
    .map(([key]) => key) as Array<KeysWith<P>>;
}

/** The record's schemas, by key: the table as `Type.Object` takes it. */
export const RECORD_PROPERTIES = Object.fromEntries(
  rows.map(([key, r]) => [key, r.schema]),
) as unknown as { [K in FieldKey]: Fields[K]['schema'] };

/** A new portfolio's value of a field of `kind`, unless its row says otherwise. */
export function initialValueOf(key: FieldKey): unknown {
  const r: FieldRow = PORTFOLIO_FIELDS[key];
  if (r.initial !== undefined) return r.initial;
  switch (r.kind) {
    case 'text':
    case 'html':
      return '';
    case 'tags':
    case 'files':
      return [];
    case 'flag':
      return false;
    case 'cover':
      return null;
    default:
      return undefined;
  }
}

/** Text limits by key: what validation and the forms' counters use. */
export const TEXT_LIMITS = Object.fromEntries(
  rows.flatMap(([key, r]) => (r.maxLength === undefined ? [] : [[key, r.maxLength]])),
) as { [K in KeysWith<'maxLength'>]: Fields[K]['maxLength'] };

/** The label of a record key (or the key itself for one the table does not have). */
export function fieldLabelOf(key: string): string {
  return (PORTFOLIO_FIELDS as Record<string, FieldRow>)[key]?.label ?? key;
}

/**
 * Keys whose values are one value whatever their case (the table's `facet.folded`): the list's
 * filter and the facets compare them as `foldCase` leaves them.
 */
export const CASE_FOLDED_KEYS: ReadonlySet<FieldKey> = new Set(
  fieldKeysWhere((r) => r.facet?.folded === true),
);

/** A value of a case-folded key as it is compared (JavaScript's lower case, on every backend). */
export const foldCase = (text: string): string => text.toLowerCase();
