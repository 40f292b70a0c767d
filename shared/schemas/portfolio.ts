import {
  Type,
  type Static,
  type TNull,
  type TOptional,
  type TProperties,
  type TUnion,
} from '@sinclair/typebox';
import {
  fieldKeysWith,
  PORTFOLIO_FIELDS,
  rankedKeys,
  RECORD_PROPERTIES,
  TEXT_LIMITS,
  type KeysWith,
} from '../portfolio-fields';
import { Clearable, OptionalText, TAG_LIMITS } from './common';
import { CoverFileSchema, FILE_DESCRIPTION_LIMIT, ListFileSchema } from './file';

export const COMMANDS = ['save', 'publish', 'unpublish', 'activate', 'deactivate'] as const;
export type Command = (typeof COMMANDS)[number];

/** Field limits, shared by validation and the renderer's forms: from the field table. */
export const LIMITS = {
  ...TEXT_LIMITS,
  ...TAG_LIMITS,
  fileDescription: FILE_DESCRIPTION_LIMIT,
} as const;

/**
 * The one definition of a portfolio: every field with its type and limits, from the field table
 * (shared/portfolio-fields.ts). The stored record, the request bodies and every answer's view are
 * derived from it below, so a field is named, typed and limited there and nowhere else.
 */
export const PortfolioRecordSchema = Type.Object(RECORD_PROPERTIES);

/** Stamped by the repository on every committed change (DESIGN §9). */
export const ChangeStampsSchema = Type.Object({
  seq: Type.Integer({ minimum: 1, description: 'Change sequence number of the last change' }),
  createdBy: Type.String({ description: 'Username that created the portfolio' }),
  modifiedBy: Type.String({ description: 'Username that made the last change' }),
});

/** The portfolio as a repository keeps it: the record and its change stamps. */
export const StoredPortfolioSchema = Type.Composite([PortfolioRecordSchema, ChangeStampsSchema]);

const record = PortfolioRecordSchema.properties;

/** Optional in a body, and an explicit `null` clears the field (DESIGN §3). */
function optionalClearable<T extends TProperties>(
  properties: T,
): { [K in keyof T]: TOptional<TUnion<[T[K], TNull]>> } {
  return Object.fromEntries(
    Object.entries(properties).map(([key, schema]) => [key, Type.Optional(Clearable(schema))]),
  ) as { [K in keyof T]: TOptional<TUnion<[T[K], TNull]>> };
}

/** Editor-writable fields (the table's `writer: 'editor'` rows), as sent by clients. */
type EditorKey = KeysWith<'writer', 'editor'>;
type RequiredEditorKey = EditorKey & KeysWith<'required', true>;
/** Set aside: referenceStyling also takes one string, below. */
type OptionalEditorKey = Exclude<EditorKey, RequiredEditorKey | 'referenceStyling'>;
const requiredKeys = new Set<string>(fieldKeysWith('required', true));
const editorKeys = fieldKeysWith('writer', 'editor');
const requiredEditorKeys = editorKeys.filter((key): key is RequiredEditorKey =>
  requiredKeys.has(key),
);
const optionalEditorKeys = editorKeys.filter(
  (key): key is OptionalEditorKey => !requiredKeys.has(key) && key !== 'referenceStyling',
);
const editorFields = {
  ...Type.Pick(PortfolioRecordSchema, requiredEditorKeys).properties,
  ...optionalClearable(Type.Pick(PortfolioRecordSchema, optionalEditorKeys).properties),
  oboutProject: Type.Optional(
    Clearable(OptionalText(LIMITS.aboutProject, 'Alias of aboutProject (the detail spelling)')),
  ),
  referenceStyling: Type.Optional(
    Clearable(
      Type.Union([OptionalText(LIMITS.tag), record.referenceStyling], {
        description: 'A string or an array of strings; always stored and returned as an array',
      }),
    ),
  ),
};

export const CreatePortfolioBodySchema = Type.Object(
  {
    portfolioId: Type.Optional({
      ...record.portfolioId,
      description: 'Optional client-made id; 409 when taken',
    }),
    ...editorFields,
  },
  { $id: 'CreatePortfolioBody', additionalProperties: false },
);

const RevisionSchema = Type.Integer({
  minimum: 1,
  description: 'Change only if still at this revision',
});

/** Admin-only fields (the table's `writer: 'admin'` rows): texts and lists clear with null. */
type AdminKey = KeysWith<'writer', 'admin'>;
type FlagAdminKey = AdminKey & KeysWith<'kind', 'flag'>;
const adminKeys = fieldKeysWith('writer', 'admin');
const flagAdminKeys = adminKeys.filter(
  (key): key is FlagAdminKey => PORTFOLIO_FIELDS[key].kind === 'flag',
);
const clearableAdminKeys = adminKeys.filter(
  (key): key is Exclude<AdminKey, FlagAdminKey> => PORTFOLIO_FIELDS[key].kind !== 'flag',
);

export const UpdatePortfolioBodySchema = Type.Object(
  {
    ...editorFields,
    ...optionalClearable(Type.Pick(PortfolioRecordSchema, clearableAdminKeys).properties),
    ...Type.Partial(Type.Pick(PortfolioRecordSchema, flagAdminKeys)).properties,
    command: Type.Optional(
      Type.Union(
        COMMANDS.map((command) => Type.Literal(command)),
        { description: 'Defaults to "save"' },
      ),
    ),
    revision: Type.Optional(RevisionSchema),
  },
  { $id: 'UpdatePortfolioBody', additionalProperties: false },
);

/** Bodies that only make a change conditional (restore, delete): `{"revision": n}` or nothing. */
export const ConditionalBodySchema = Type.Object(
  { revision: Type.Optional(RevisionSchema) },
  { $id: 'ConditionalBody', additionalProperties: false },
);

/** `If-Match: "<revision>"` (or `*`) makes a change conditional (DESIGN §3). */
export const IfMatchHeadersSchema = Type.Object({
  'if-match': Type.Optional(
    Type.String({
      maxLength: 100,
      description: 'The revision the change expects, like "3"; 409 when the portfolio moved on',
    }),
  ),
});

export const PortfolioIdParamsSchema = Type.Object({
  portfolioId: Type.String({ minLength: 1, maxLength: 64 }),
});

/** What create and update answer: the editor fields as stored, and the revision. */
export const ECHO_KEYS = fieldKeysWith('echo', true);
export const PortfolioCreatedSchema = Type.Pick(
  PortfolioRecordSchema,
  [...ECHO_KEYS, 'createdTime'],
  { $id: 'PortfolioCreated' },
);
export const PortfolioUpdatedSchema = Type.Pick(
  PortfolioRecordSchema,
  [...ECHO_KEYS, 'modifiedTime'],
  { $id: 'PortfolioUpdated' },
);

/**
 * The detail answer: the record with the interface's spellings (`oboutProject`, `createdDate`,
 * files with `fileID` in lists and `data` on request), plus who created and last changed it.
 */
export const PortfolioDetailSchema = Type.Object(
  {
    ...Type.Pick(PortfolioRecordSchema, [
      'portfolioId',
      'memberBarcode',
      'category',
      'projectTitle',
    ]).properties,
    cover: Type.Union([Type.Partial(CoverFileSchema), Type.Null()]),
    oboutProject: record.aboutProject,
    projectDetail: record.projectDetail,
    draftingProcess: Type.Array(Type.Partial(ListFileSchema)),
    ...Type.Pick(PortfolioRecordSchema, [
      'projectLanuching',
      'readyToBuy',
      'occasion',
      'referenceStyling',
      'generalTag',
    ]).properties,
    additionalDocument: Type.Array(Type.Partial(ListFileSchema)),
    ...Type.Pick(PortfolioRecordSchema, [
      'relativeCategory',
      'certificateByOrg',
      'certificateDesc',
      'staffPick',
    ]).properties,
    createdDate: record.createdTime,
    ...Type.Pick(PortfolioRecordSchema, ['modifiedTime', 'published', 'active', 'revision'])
      .properties,
    ...Type.Pick(ChangeStampsSchema, ['createdBy', 'modifiedBy']).properties,
  },
  { $id: 'PortfolioDetail' },
);

export const DetailQuerySchema = Type.Object(
  {
    field: Type.Optional(
      Type.String({
        maxLength: 2000,
        description: 'Comma-separated fields to return (e.g. leave out cover.data)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ORDER_KEYS = rankedKeys('order');
/** Filter keys everyone may use (viewers see only published, active portfolios anyway). */
export const FILTER_KEYS = rankedKeys('filter').filter(
  (key): key is Exclude<KeysWith<'filter'>, StaffFilterKey> =>
    !('staff' in PORTFOLIO_FIELDS[key].filter),
);
type StaffFilterKey = KeysWith<'filter', { readonly staff: true }>;
/** Filter keys only editors and admins may use. */
export const STAFF_FILTER_KEYS = rankedKeys('filter').filter(
  (key): key is StaffFilterKey => 'staff' in PORTFOLIO_FIELDS[key].filter,
);
export const COVER_SUBFIELDS = [
  'fileId',
  'originalFilename',
  'fullFileExtension',
  'mimeType',
  'description',
  'createdTime',
  'modifiedTime',
  'md5Checksum',
  'size',
  'data',
  'dimention.width',
  'dimention.height',
] as const;
/** The interface's list fields; the default `field` selection is exactly these. */
export const DEFAULT_LIST_FIELDS = [
  'portfolioId',
  'projectTitle',
  'cover',
  ...COVER_SUBFIELDS.map((sub) => `cover.${sub}` as const),
  'cover.dimention',
] as const;
/**
 * Every key `field` accepts on the list: the interface's, plus (a project extension) what the
 * gallery cards need without one detail request per card.
 */
/** The record keys a gallery card may ask for beyond the interface's (the table's `listed`). */
const EXTENDED_LIST_KEYS = fieldKeysWith('listed', true);
export const LIST_FIELDS = [...DEFAULT_LIST_FIELDS, ...EXTENDED_LIST_KEYS] as const;

export const ListQuerySchema = Type.Object(
  {
    orderBy: Type.Optional(
      Type.String({ maxLength: 500, description: 'e.g. "staffPick-,createdTime"' }),
    ),
    filter: Type.Optional(
      Type.String({ maxLength: 2000, description: 'e.g. "category:Art,staffPick:true"' }),
    ),
    pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    pageToken: Type.Optional(Type.String({ maxLength: 2000 })),
    field: Type.Optional(Type.String({ maxLength: 2000 })),
    q: Type.Optional(
      Type.String({
        // The 200-character limit is checked by the route, whose 400 says what the limit is.
        maxLength: 2000,
        description:
          'Full-text search: every word must match the start of a word in projectTitle, ' +
          'aboutProject, projectDetail, generalTag, occasion or memberBarcode; case and accents ' +
          'are ignored; at most 200 characters. With orderBy=relevance, best matches first.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** A cover as field selection leaves it: any sub-field may be missing, `null` when none. */
export const SelectedCoverSchema = Type.Union(
  [
    Type.Partial(
      Type.Object({
        ...CoverFileSchema.properties,
        dimention: Type.Union([
          Type.Partial(Type.Object({ width: Type.Integer(), height: Type.Integer() })),
          Type.Null(),
        ]),
      }),
    ),
    Type.Null(),
  ],
  { $id: 'CoverSelection' },
);

/** A list item: any of the list's keys, as `field` selects them. */
export const ListItemSchema = Type.Partial(
  Type.Object({
    ...Type.Pick(PortfolioRecordSchema, ['portfolioId', 'projectTitle']).properties,
    cover: SelectedCoverSchema,
    ...Type.Pick(PortfolioRecordSchema, EXTENDED_LIST_KEYS).properties,
  }),
  { $id: 'ListItem' },
);

export const ListResponseSchema = Type.Object(
  {
    lists: Type.Array(ListItemSchema),
    result: Type.Integer({ description: 'Items on this page' }),
    total: Type.Integer({ description: 'Portfolios matching the filter' }),
    nextPageToken: Type.String({ description: 'Empty on the last page' }),
  },
  { $id: 'ListResponse' },
);

/** The keys the facets endpoint counts (the table's `facet`), in their order. */
export const FACET_KEYS = rankedKeys('facet');
export type FacetKey = (typeof FACET_KEYS)[number];

export const FacetQuerySchema = Type.Object(
  {
    keys: Type.Optional(
      Type.String({
        maxLength: 500,
        description: `Comma-separated keys to count; all of them when not given (${FACET_KEYS.join(', ')})`,
      }),
    ),
    filter: ListQuerySchema.properties.filter,
    q: ListQuerySchema.properties.q,
  },
  { additionalProperties: false },
);

export const FacetValueSchema = Type.Object({
  value: Type.String(),
  count: Type.Integer({ minimum: 1, description: 'Matching portfolios with this value' }),
});

export const FacetsResponseSchema = Type.Object(
  {
    facets: Type.Record(Type.String(), Type.Array(FacetValueSchema), {
      description: 'Per key asked for: its values, the most used first (then by value)',
    }),
  },
  { $id: 'FacetsResponse' },
);

export type CreatePortfolioBody = Static<typeof CreatePortfolioBodySchema>;
export type UpdatePortfolioBody = Static<typeof UpdatePortfolioBodySchema>;
export type PortfolioRecord = Static<typeof PortfolioRecordSchema>;
export type ChangeStamps = Static<typeof ChangeStampsSchema>;
export type StoredPortfolioRecord = Static<typeof StoredPortfolioSchema>;
export type ConditionalBody = Static<typeof ConditionalBodySchema>;
export type PortfolioCreated = Static<typeof PortfolioCreatedSchema>;
export type PortfolioUpdated = Static<typeof PortfolioUpdatedSchema>;
export type PortfolioDetail = Static<typeof PortfolioDetailSchema>;
export type ListQuery = Static<typeof ListQuerySchema>;
export type ListItem = Static<typeof ListItemSchema>;
export type ListResponse = Static<typeof ListResponseSchema>;
export type OrderKey = (typeof ORDER_KEYS)[number];
export type FacetQuery = Static<typeof FacetQuerySchema>;
export type FacetValue = Static<typeof FacetValueSchema>;
export type FacetsResponse = Static<typeof FacetsResponseSchema>;
export type FilterKey = (typeof FILTER_KEYS)[number] | (typeof STAFF_FILTER_KEYS)[number];
