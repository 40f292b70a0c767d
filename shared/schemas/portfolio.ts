import { Type, type Static } from '@sinclair/typebox';
import { Clearable, Identifier, OptionalText, RequiredText, TagList, Timestamp } from './common';
import { CoverFileSchema, ListFileSchema, StoredFileSchema } from './file';

export const COMMANDS = ['save', 'publish', 'unpublish', 'activate', 'deactivate'] as const;
export type Command = (typeof COMMANDS)[number];

/** Field limits, shared by validation and the renderer's forms. */
export const LIMITS = {
  memberBarcode: 64,
  category: 100,
  projectTitle: 200,
  projectDetail: 20_000,
  aboutProject: 20_000,
  projectLanuching: 100,
  readyToBuy: 100,
  certificateDesc: 50_000,
  tag: 100,
  tags: 50,
} as const;

const MemberBarcode = Type.String({
  minLength: 1,
  maxLength: LIMITS.memberBarcode,
  pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$',
  description: 'Letters, digits, ".", "-" and "_"',
});

const ReferenceStyling = Type.Union([OptionalText(LIMITS.tag), TagList()], {
  description: 'A string or an array of strings; always stored and returned as an array',
});

/** Editor-writable fields, as sent by clients. */
const editorFields = {
  memberBarcode: MemberBarcode,
  category: RequiredText(LIMITS.category),
  projectTitle: RequiredText(LIMITS.projectTitle),
  projectDetail: RequiredText(LIMITS.projectDetail),
  aboutProject: Type.Optional(Clearable(OptionalText(LIMITS.aboutProject))),
  oboutProject: Type.Optional(
    Clearable(OptionalText(LIMITS.aboutProject, 'Alias of aboutProject (the detail spelling)')),
  ),
  projectLanuching: Type.Optional(Clearable(OptionalText(LIMITS.projectLanuching))),
  readyToBuy: Type.Optional(Clearable(OptionalText(LIMITS.readyToBuy))),
  occasion: Type.Optional(Clearable(TagList())),
  referenceStyling: Type.Optional(Clearable(ReferenceStyling)),
  generalTag: Type.Optional(Clearable(TagList())),
  relativeCategory: Type.Optional(Clearable(TagList())),
};

export const ADMIN_FIELDS = ['certificateByOrg', 'certificateDesc', 'staffPick'] as const;

export const CreatePortfolioBodySchema = Type.Object(
  {
    portfolioId: Type.Optional({
      ...Identifier,
      description: 'Optional client-made id; 409 when taken',
    }),
    ...editorFields,
  },
  { $id: 'CreatePortfolioBody', additionalProperties: false },
);

export const UpdatePortfolioBodySchema = Type.Object(
  {
    ...editorFields,
    certificateByOrg: Type.Optional(Clearable(TagList())),
    certificateDesc: Type.Optional(
      Clearable(OptionalText(LIMITS.certificateDesc, 'HTML; sanitized')),
    ),
    staffPick: Type.Optional(Type.Boolean()),
    command: Type.Optional(
      Type.Union(
        COMMANDS.map((command) => Type.Literal(command)),
        { description: 'Defaults to "save"' },
      ),
    ),
    revision: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Update only if still at this revision' }),
    ),
  },
  { $id: 'UpdatePortfolioBody', additionalProperties: false },
);

export const PortfolioIdParamsSchema = Type.Object({
  portfolioId: Type.String({ minLength: 1, maxLength: 64 }),
});

/** The portfolio as the store keeps it. */
export const PortfolioRecordSchema = Type.Object({
  portfolioId: Type.String(),
  memberBarcode: Type.String(),
  category: Type.String(),
  relativeCategory: Type.Array(Type.String()),
  projectTitle: Type.String(),
  aboutProject: Type.String(),
  projectDetail: Type.String(),
  projectLanuching: Type.String(),
  readyToBuy: Type.String(),
  occasion: Type.Array(Type.String()),
  referenceStyling: Type.Array(Type.String()),
  generalTag: Type.Array(Type.String()),
  certificateByOrg: Type.Array(Type.String()),
  certificateDesc: Type.String(),
  staffPick: Type.Boolean(),
  cover: Type.Union([StoredFileSchema, Type.Null()]),
  draftingProcess: Type.Array(StoredFileSchema),
  additionalDocument: Type.Array(StoredFileSchema),
  createdTime: Timestamp,
  modifiedTime: Timestamp,
  published: Type.Boolean(),
  active: Type.Boolean(),
  revision: Type.Integer(),
});

const echoFields = {
  portfolioId: Type.String(),
  memberBarcode: Type.String(),
  category: Type.String(),
  relativeCategory: Type.Array(Type.String()),
  projectTitle: Type.String(),
  aboutProject: Type.String(),
  projectDetail: Type.String(),
  projectLanuching: Type.String(),
  readyToBuy: Type.String(),
  occasion: Type.Array(Type.String()),
  referenceStyling: Type.Array(Type.String()),
  generalTag: Type.Array(Type.String()),
  revision: Type.Integer(),
};

export const PortfolioCreatedSchema = Type.Object(
  { ...echoFields, createdTime: Timestamp },
  { $id: 'PortfolioCreated' },
);
export const PortfolioUpdatedSchema = Type.Object(
  { ...echoFields, modifiedTime: Timestamp },
  { $id: 'PortfolioUpdated' },
);

export const PortfolioDetailSchema = Type.Object(
  {
    portfolioId: Type.String(),
    memberBarcode: Type.String(),
    category: Type.String(),
    projectTitle: Type.String(),
    cover: Type.Union([Type.Partial(CoverFileSchema), Type.Null()]),
    oboutProject: Type.String(),
    projectDetail: Type.String(),
    draftingProcess: Type.Array(Type.Partial(ListFileSchema)),
    projectLanuching: Type.String(),
    readyToBuy: Type.String(),
    occasion: Type.Array(Type.String()),
    referenceStyling: Type.Array(Type.String()),
    generalTag: Type.Array(Type.String()),
    additionalDocument: Type.Array(Type.Partial(ListFileSchema)),
    relativeCategory: Type.Array(Type.String()),
    certificateByOrg: Type.Array(Type.String()),
    certificateDesc: Type.String(),
    staffPick: Type.Boolean(),
    createdDate: Timestamp,
    modifiedTime: Timestamp,
    published: Type.Boolean(),
    active: Type.Boolean(),
    revision: Type.Integer(),
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

export const ListItemSchema = Type.Object(
  {
    portfolioId: Type.Optional(Type.String()),
    projectTitle: Type.Optional(Type.String()),
    cover: Type.Optional(SelectedCoverSchema),
    category: Type.Optional(Type.String()),
    memberBarcode: Type.Optional(Type.String()),
    published: Type.Optional(Type.Boolean()),
    active: Type.Optional(Type.Boolean()),
    staffPick: Type.Optional(Type.Boolean()),
    createdTime: Type.Optional(Timestamp),
    modifiedTime: Type.Optional(Timestamp),
    revision: Type.Optional(Type.Integer()),
  },
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
export type PortfolioCreated = Static<typeof PortfolioCreatedSchema>;
export type PortfolioUpdated = Static<typeof PortfolioUpdatedSchema>;
export type PortfolioDetail = Static<typeof PortfolioDetailSchema>;
export type ListQuery = Static<typeof ListQuerySchema>;
export type ListItem = Static<typeof ListItemSchema>;
export type ListResponse = Static<typeof ListResponseSchema>;
export type OrderKey = (typeof ORDER_KEYS)[number];
export type FilterKey = (typeof FILTER_KEYS)[number] | (typeof STAFF_FILTER_KEYS)[number];
