import { Type, type Static } from '@sinclair/typebox';
import { Identifier, Sha256Schema, Timestamp } from './common';
import { DimensionSchema, FileDescriptionSchema } from './file';
import { ChangeStampsSchema, ListQuerySchema, PortfolioDetailSchema } from './portfolio';

/** The format of an export ZIP this version writes and reads (DESIGN §11). */
export const EXPORT_FORMAT_VERSION = 1;

/** The CSV's columns, in order (DESIGN §11). */
export const CSV_COLUMNS = [
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
  'certificateByOrg',
  'staffPick',
  'published',
  'active',
  'revision',
  'createdTime',
  'modifiedTime',
  'cover',
] as const;

export const ExportQuerySchema = Type.Object(
  {
    format: Type.Optional(
      Type.Union([Type.Literal('zip'), Type.Literal('csv'), Type.Literal('pdf')], {
        default: 'zip',
        description:
          'zip: portfolios with history and files; csv: one row per portfolio; pdf: a printable catalogue',
      }),
    ),
    orderBy: ListQuerySchema.properties.orderBy,
    filter: ListQuerySchema.properties.filter,
    q: ListQuerySchema.properties.q,
    ids: Type.Optional(
      Type.String({
        maxLength: 65_000,
        description: 'Comma-separated portfolioIds: only these (a selection), still filtered',
      }),
    ),
  },
  { additionalProperties: false },
);

const exportedFileFields = {
  sha256: { ...Sha256Schema, description: 'Names the entry files/<sha256> holding the bytes' },
  originalFilename: Type.String({ maxLength: 255 }),
  fullFileExtension: Type.String({ maxLength: 50 }),
  mimeType: Type.String({ maxLength: 255 }),
  description: FileDescriptionSchema,
  createdTime: Timestamp,
  modifiedTime: Timestamp,
  md5Checksum: Type.String({ maxLength: 32 }),
  size: Type.Integer({ minimum: 0 }),
  dimention: DimensionSchema,
};

/** A file in an export: the detail's File object without `data`, plus the sha256 of its bytes. */
export const ExportedCoverSchema = Type.Object(
  { fileId: Identifier, ...exportedFileFields },
  { additionalProperties: false },
);
export const ExportedListFileSchema = Type.Object(
  { fileID: Identifier, ...exportedFileFields },
  { additionalProperties: false },
);

const detail = PortfolioDetailSchema.properties;
const exportedDetail = {
  ...detail,
  cover: Type.Union([ExportedCoverSchema, Type.Null()]),
  draftingProcess: Type.Array(ExportedListFileSchema, { maxItems: 1000 }),
  additionalDocument: Type.Array(ExportedListFileSchema, { maxItems: 1000 }),
  createdBy: ChangeStampsSchema.properties.createdBy,
  modifiedBy: ChangeStampsSchema.properties.modifiedBy,
};

/** One kept revision in an export: its detail shape then, with who, which command, what changed. */
export const ExportedRevisionSchema = Type.Object(
  {
    ...exportedDetail,
    changedTime: Type.Optional({
      ...Timestamp,
      description:
        'When the revision was made, as its history lists it (modifiedTime is the record’s own)',
    }),
    command: Type.String({ maxLength: 100 }),
    changedFields: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 }),
  },
  { additionalProperties: false },
);

/** `portfolios/<portfolioId>.json` of an export ZIP. */
export const ExportedPortfolioSchema = Type.Object(
  {
    ...exportedDetail,
    revisions: Type.Array(ExportedRevisionSchema, {
      maxItems: 100_000,
      description: 'Every kept revision, oldest first; the last is the current one',
    }),
  },
  { additionalProperties: false },
);

/** `manifest.json` of an export ZIP: the backup manifest's fields (DESIGN §11). */
export const ExportManifestSchema = Type.Object(
  {
    formatVersion: Type.Integer({ minimum: 1 }),
    productVersion: Type.String({ maxLength: 100 }),
    libraryId: Type.String({ maxLength: 200 }),
    seq: Type.Integer({ minimum: 0 }),
    createdTime: Timestamp,
    counts: Type.Object(
      {
        portfolios: Type.Integer({ minimum: 0 }),
        revisions: Type.Integer({ minimum: 0 }),
        files: Type.Integer({ minimum: 0 }),
      },
      { additionalProperties: false },
    ),
    files: Type.Record(Type.String({ maxLength: 300 }), Sha256Schema, {
      description: 'The sha256 of every other entry, by its path in the ZIP',
    }),
  },
  { additionalProperties: false },
);

export const ImportReportSchema = Type.Object(
  {
    created: Type.Integer({
      description: 'Portfolios this library did not have, made with their history',
    }),
    unchanged: Type.Integer({ description: 'Portfolios already here with the same content' }),
    merged: Type.Integer({
      description: 'Portfolios here with other content, merged as a sync mutation would be',
    }),
    conflicts: Type.Integer({
      description: 'Merged portfolios where both sides changed one field: see the conflicts API',
    }),
    conflicted: Type.Array(Type.String(), {
      description: 'The ids of those portfolios, to open each and settle its conflict',
    }),
    refused: Type.Array(Type.Object({ portfolioId: Type.String(), reason: Type.String() }), {
      description: 'Portfolios left out, each with why (rights, the trash, a refused file)',
    }),
  },
  { $id: 'ImportReport' },
);

export type ExportQuery = Static<typeof ExportQuerySchema>;
export type ExportedCover = Static<typeof ExportedCoverSchema>;
export type ExportedListFile = Static<typeof ExportedListFileSchema>;
export type ExportedRevision = Static<typeof ExportedRevisionSchema>;
export type ExportedPortfolio = Static<typeof ExportedPortfolioSchema>;
export type ExportManifest = Static<typeof ExportManifestSchema>;
export type ImportReport = Static<typeof ImportReportSchema>;
export type CsvColumn = (typeof CSV_COLUMNS)[number];
