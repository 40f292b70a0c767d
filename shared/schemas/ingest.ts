import { Type, type Static } from '@sinclair/typebox';
import { Identifier, Sha256Schema } from './common';
import { FILE_SLOTS, FileDescriptionSchema } from './file';
import { CreatePortfolioBodySchema } from './portfolio';

/** The most files one ingest request names: a cover and two full lists fit well below it. */
export const INGEST_FILES_LIMIT = 1000;

/** A file an ingest attaches: a blob the server holds, by its sha256, and where it goes. */
export const IngestFileSchema = Type.Object(
  {
    slot: Type.Union(
      FILE_SLOTS.map((slot) => Type.Literal(slot)),
      { description: 'cover, draftingProcess or additionalDocument' },
    ),
    sha256: Sha256Schema,
    originalFilename: Type.String({ minLength: 1, maxLength: 1000 }),
    description: Type.Optional(FileDescriptionSchema),
  },
  { additionalProperties: false },
);

/** The create fields of a portfolio, without a client-made id: ingest finds or makes it. */
const { portfolioId: _id, ...createFields } = CreatePortfolioBodySchema.properties;

export const IngestBodySchema = Type.Object(
  {
    portfolio: Type.Object(createFields, {
      additionalProperties: false,
      description:
        'The fields of a create. memberBarcode and projectTitle find the live portfolio to add ' +
        'to; the other fields are used only when it is made.',
    }),
    files: Type.Array(IngestFileSchema, { maxItems: INGEST_FILES_LIMIT }),
  },
  { $id: 'IngestBody', additionalProperties: false },
);

export const IngestResultSchema = Type.Object(
  {
    portfolioId: Identifier,
    created: Type.Boolean({ description: 'The portfolio was made by this request' }),
    revision: Type.Integer({ minimum: 1 }),
    added: Type.Integer({ minimum: 0, description: 'Files attached by this request' }),
    kept: Type.Integer({
      minimum: 0,
      description: 'Files the portfolio already held (same bytes in the same place)',
    }),
  },
  { $id: 'IngestResult', additionalProperties: false },
);

export type IngestFile = Static<typeof IngestFileSchema>;
export type IngestBody = Static<typeof IngestBodySchema>;
export type IngestResult = Static<typeof IngestResultSchema>;
