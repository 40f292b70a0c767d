import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from './common';
import { ChangeStampsSchema, PortfolioDetailSchema, PortfolioRecordSchema } from './portfolio';
import { ConflictSchema } from './sync';

/** Keyset paging of history and trash: newest first, `nextPageToken` "" on the last page. */
export const PageQuerySchema = Type.Object(
  {
    pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    pageToken: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);

export const RevisionParamsSchema = Type.Object({
  portfolioId: Type.String({ minLength: 1, maxLength: 64 }),
  // Path parameters are text and validated without coercion: a revision is written in digits.
  revision: Type.String({ pattern: '^[1-9][0-9]{0,14}$', description: 'A revision number' }),
});

/** One kept revision: who made it, when, with which command, and which fields it changed. */
export const RevisionSummarySchema = Type.Object(
  {
    revision: PortfolioRecordSchema.properties.revision,
    modifiedTime: Timestamp,
    modifiedBy: Type.String(),
    command: Type.String({
      description:
        'create, save, publish, unpublish, activate, deactivate, file, reorder (drafting images), cover (a drafting image made the cover), describe (several files), restore (a revision), undelete (from the trash), migrate, sync (a replica’s change) or resolve-conflict',
    }),
    changedFields: Type.Array(Type.String(), {
      description: 'Top-level keys this revision changed',
    }),
  },
  { $id: 'RevisionSummary' },
);

export const RevisionListSchema = Type.Object(
  {
    revisions: Type.Array(RevisionSummarySchema),
    total: Type.Integer({ description: 'Revisions kept for this portfolio' }),
    nextPageToken: Type.String({ description: 'Empty on the last page' }),
  },
  { $id: 'RevisionList' },
);

export const TrashItemSchema = Type.Object(
  {
    ...Type.Pick(PortfolioRecordSchema, ['portfolioId', 'projectTitle', 'category']).properties,
    deletedTime: Timestamp,
    deletedBy: Type.String(),
    revision: Type.Integer({ description: 'The revision it had when deleted' }),
    purgeTime: Type.Integer({
      minimum: 0,
      description:
        'When it is due to be purged for good (milliseconds since the Unix epoch): its deletedTime plus the days the trash keeps portfolios; the first retention pass after this moment purges it',
    }),
  },
  { $id: 'TrashItem' },
);

export const TrashListSchema = Type.Object(
  {
    lists: Type.Array(TrashItemSchema),
    total: Type.Integer({ description: 'Portfolios in the trash' }),
    nextPageToken: Type.String({ description: 'Empty on the last page' }),
  },
  { $id: 'TrashList' },
);

export const ChangesQuerySchema = Type.Object(
  {
    since: Type.Optional(
      Type.Integer({ minimum: 0, default: 0, description: 'The `next` of the previous answer' }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  },
  { additionalProperties: false },
);

/** The feed's portfolio: the detail shape without file data, plus its `seq` and `conflicts`. */
export const FeedPortfolioSchema = Type.Object(
  {
    ...PortfolioDetailSchema.properties,
    seq: ChangeStampsSchema.properties.seq,
    fileHashes: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description:
          'The sha256 of each file by its id (cover and lists), so a replica can fetch the bytes ' +
          'it lacks from `GET /api/v1/blobs/{sha256}` (sync, DESIGN §10)',
      }),
    ),
    conflicts: Type.Optional(
      Type.Array(ConflictSchema, {
        description: 'Sync conflicts waiting for a person (DESIGN §10); absent when none',
      }),
    ),
  },
  { $id: 'FeedPortfolio' },
);

export const ChangeSchema = Type.Object(
  {
    seq: Type.Integer(),
    portfolioId: Type.String(),
    revision: Type.Integer(),
    deleted: Type.Boolean({ description: 'A tombstone: in the trash or purged; no portfolio' }),
    portfolio: Type.Optional(FeedPortfolioSchema),
  },
  { $id: 'Change' },
);

export const ChangesResponseSchema = Type.Object(
  {
    changes: Type.Array(ChangeSchema),
    next: Type.Integer({ description: 'Pass as `since` next time' }),
    hasMore: Type.Boolean(),
    libraryId: Type.String({ description: 'Changes when the library is recreated or restored' }),
  },
  { $id: 'ChangesResponse' },
);

export type PageQuery = Static<typeof PageQuerySchema>;
export type RevisionSummary = Static<typeof RevisionSummarySchema>;
export type RevisionList = Static<typeof RevisionListSchema>;
export type TrashItem = Static<typeof TrashItemSchema>;
export type TrashList = Static<typeof TrashListSchema>;
export type ChangesQuery = Static<typeof ChangesQuerySchema>;
export type FeedPortfolio = Static<typeof FeedPortfolioSchema>;
export type ChangeItem = Static<typeof ChangeSchema>;
export type ChangesResponse = Static<typeof ChangesResponseSchema>;
