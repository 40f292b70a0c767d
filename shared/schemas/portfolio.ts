import {
  Type,
  type Static,
  type TNull,
  type TOptional,
  type TProperties,
  type TUnion,
} from '@sinclair/typebox';
import {
  Clearable,
  Identifier,
  LIMITS,
  OptionalText,
  RequiredText,
  TagList,
  Timestamp,
} from './common';
import { CoverFileSchema, ListFileSchema, StoredFileSchema } from './file';
import { AppliedMutationSchema, ConflictSchema } from './sync';

export const COMMANDS = ['save', 'publish', 'unpublish', 'activate', 'deactivate'] as const;
export type Command = (typeof COMMANDS)[number];

const MemberBarcode = Type.String({
  minLength: 1,
  maxLength: LIMITS.memberBarcode,
  pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$',
  description: 'Letters, digits, ".", "-" and "_"',
  'x-words': {
    pattern:
      'A member barcode uses letters, digits, dots, dashes and underscores, and starts with a letter or digit.',
    minLength: 'The member barcode is required.',
    maxLength: `A member barcode has at most ${LIMITS.memberBarcode} characters.`,
  },
});

/**
 * The one definition of a portfolio: every field with its type and limits. The stored record,
 * the request bodies and every answer's view are derived from it below, so a field is named,
 * typed and limited here and nowhere else.
 */
export const PortfolioRecordSchema = Type.Object({
  portfolioId: Identifier,
  memberBarcode: MemberBarcode,
  category: RequiredText(LIMITS.category),
  relativeCategory: TagList(),
  projectTitle: RequiredText(LIMITS.projectTitle),
  aboutProject: OptionalText(LIMITS.aboutProject),
  projectDetail: RequiredText(LIMITS.projectDetail),
  projectLanuching: OptionalText(LIMITS.projectLanuching),
  readyToBuy: OptionalText(LIMITS.readyToBuy),
  occasion: TagList(),
  referenceStyling: TagList(),
  generalTag: TagList(),
  certificateByOrg: TagList(),
  certificateDesc: OptionalText(LIMITS.certificateDesc, 'HTML; sanitized'),
  staffPick: Type.Boolean(),
  cover: Type.Union([StoredFileSchema, Type.Null()]),
  draftingProcess: Type.Array(StoredFileSchema),
  additionalDocument: Type.Array(StoredFileSchema),
  createdTime: Timestamp,
  modifiedTime: Timestamp,
  published: Type.Boolean(),
  active: Type.Boolean(),
  revision: Type.Integer({ minimum: 1 }),
  /** Sync conflicts waiting for a person (DESIGN §10); absent when none. */
  conflicts: Type.Optional(Type.Array(ConflictSchema)),
  /** Mutations of replicas this record took in, so a retried one is answered, not re-applied. */
  syncApplied: Type.Optional(Type.Array(AppliedMutationSchema)),
});

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

/** Editor-writable fields, as sent by clients. */
const editorFields = {
  ...Type.Pick(PortfolioRecordSchema, [
    'memberBarcode',
    'category',
    'projectTitle',
    'projectDetail',
  ]).properties,
  ...optionalClearable(
    Type.Pick(PortfolioRecordSchema, [
      'aboutProject',
      'projectLanuching',
      'readyToBuy',
      'occasion',
      'generalTag',
      'relativeCategory',
    ]).properties,
  ),
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

export const UpdatePortfolioBodySchema = Type.Object(
  {
    ...editorFields,
    ...optionalClearable(
      Type.Pick(PortfolioRecordSchema, ['certificateByOrg', 'certificateDesc']).properties,
    ),
    staffPick: Type.Optional(record.staffPick),
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
export const ECHO_KEYS = [
  'portfolioId',
  'memberBarcode',
  'category',
  'relativeCategory',
  'projectTitle',
  'aboutProject',
  'projectDetail',
  'projectLanuching',
  'readyToBuy',
  'occasion',
  'referenceStyling',
  'generalTag',
  'revision',
] as const;
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

export const ORDER_KEYS = [
  'createdTime',
  'modifiedTime',
  'projectTitle',
  'category',
  'staffPick',
] as const;
export const FILTER_KEYS = [
  'memberBarcode',
  'category',
  'relativeCategory',
  'readyToBuy',
  'certificateByOrg',
  'staffPick',
  'projectTitle',
] as const;
/** Filter keys only editors and admins may use. */
export const STAFF_FILTER_KEYS = ['published', 'active'] as const;
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
export const LIST_FIELDS = [
  ...DEFAULT_LIST_FIELDS,
  'category',
  'memberBarcode',
  'published',
  'active',
  'staffPick',
  'createdTime',
  'modifiedTime',
  'revision',
] as const;

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
    ...Type.Pick(PortfolioRecordSchema, [
      'category',
      'memberBarcode',
      'published',
      'active',
      'staffPick',
      'createdTime',
      'modifiedTime',
      'revision',
    ]).properties,
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
export type FilterKey = (typeof FILTER_KEYS)[number] | (typeof STAFF_FILTER_KEYS)[number];
