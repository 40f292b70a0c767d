import { Type, type Static } from '@sinclair/typebox';
import { fieldKeysWith } from '../portfolio-fields';
import { Identifier } from './common';
import { ListFileSchema } from './file';
import {
  COMMANDS,
  ListQuerySchema,
  PortfolioRecordSchema,
  UpdatePortfolioBodySchema,
} from './portfolio';

/**
 * The most portfolios one bulk edit may change (DESIGN §16): `ids` longer than this are refused
 * by the schema, and a filter matching more is refused whole (413 BULK_TOO_MANY) before any
 * change, so one request can never hold the server for long nor leave an unbounded undo.
 */
export const BULK_MAX_PORTFOLIOS = 1000;

/** The tag-like lists (the field table's `tags` rows) that addTags and removeTags change. */
export const TAG_LIST_KEYS = fieldKeysWith('kind', 'tags');

/** What a bulk edit may set on each portfolio: an update's fields, without command or revision. */
export const BulkSetSchema = Type.Object(
  Type.Partial(Type.Omit(UpdatePortfolioBodySchema, ['command', 'revision'])).properties,
  { $id: 'BulkSet', additionalProperties: false },
);

export const TagChangesSchema = Type.Object(
  Type.Partial(Type.Pick(PortfolioRecordSchema, TAG_LIST_KEYS)).properties,
  { additionalProperties: false },
);

/** A bulk command: the update commands (but `save`, the default), and the trash both ways. */
export const BULK_COMMANDS = [
  ...COMMANDS.filter((command) => command !== 'save'),
  'trash',
  'restore',
] as const;
export type BulkCommand = (typeof BULK_COMMANDS)[number];

export const BulkEditBodySchema = Type.Object(
  {
    ids: Type.Optional(
      Type.Array(Identifier, {
        minItems: 1,
        maxItems: BULK_MAX_PORTFOLIOS,
        description: `The portfolios to change (at most ${BULK_MAX_PORTFOLIOS}); or use filter/q`,
      }),
    ),
    filter: Type.Optional({
      ...ListQuerySchema.properties.filter,
      description: "Select like the list's filter (what the caller sees); not with ids",
    }),
    q: Type.Optional({
      ...ListQuerySchema.properties.q,
      description: "Select like the list's full-text search; not with ids",
    }),
    set: Type.Optional(BulkSetSchema),
    addTags: Type.Optional(TagChangesSchema),
    removeTags: Type.Optional(TagChangesSchema),
    command: Type.Optional(
      Type.Union(
        BULK_COMMANDS.map((command) => Type.Literal(command)),
        {
          description:
            'publish, unpublish, activate, deactivate (admin only), trash (move to the trash) or restore (bring back from it)',
        },
      ),
    ),
    expected: Type.Optional(
      Type.Record(Type.String({ maxLength: 64 }), Type.Integer({ minimum: 1 }), {
        maxProperties: BULK_MAX_PORTFOLIOS,
        description:
          'portfolioId → the revision the change expects; a stale one is a 409 for that portfolio',
      }),
    ),
  },
  { $id: 'BulkEditBody', additionalProperties: false },
);

export const BulkResultSchema = Type.Object(
  {
    portfolioId: Type.String(),
    status: Type.Union(
      [200, 400, 403, 404, 409].map((status) => Type.Literal(status)),
      {
        description: '200 changed; otherwise this portfolio is unchanged, and code/message say why',
      },
    ),
    revision: Type.Optional(
      Type.Integer({ minimum: 1, description: 'The revision it is at now (200 only)' }),
    ),
    code: Type.Optional(
      Type.String({ description: 'The error code, as a request of its own would answer' }),
    ),
    message: Type.Optional(Type.String()),
  },
  { $id: 'BulkResult' },
);

export const BulkAnswerSchema = Type.Object(
  {
    results: Type.Array(BulkResultSchema),
    undoToken: Type.Union([Type.String(), Type.Null()], {
      description:
        'Undoes every change of this action (POST /api/v1/portfolio/bulk/undo) for an hour, once; null when nothing changed',
    }),
  },
  { $id: 'BulkAnswer' },
);

export const BulkUndoBodySchema = Type.Object(
  { undoToken: Type.String({ minLength: 1, maxLength: 200 }) },
  { $id: 'BulkUndoBody', additionalProperties: false },
);

export type BulkEditBody = Static<typeof BulkEditBodySchema>;
export type BulkSet = Static<typeof BulkSetSchema>;
export type TagChanges = Static<typeof TagChangesSchema>;
export type BulkResult = Static<typeof BulkResultSchema>;
export type BulkAnswer = Static<typeof BulkAnswerSchema>;

/** Several files added to a list in one upload: one revision (DESIGN §16). */
export const FilesAddedSchema = Type.Object(
  {
    // The File object's fields, unnamed: answers that may be either a File object or this one
    // must not name the same schema twice (a serializer would find two "ListFile"s).
    files: Type.Array(Type.Object(ListFileSchema.properties), {
      description: 'The files added (File objects without data), in the order sent',
    }),
    revision: Type.Integer({ minimum: 1, description: 'The one revision that added them' }),
  },
  { $id: 'FilesAdded' },
);
export type FilesAdded = Static<typeof FilesAddedSchema>;
