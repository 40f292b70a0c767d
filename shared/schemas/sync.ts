import { Type, type Static } from '@sinclair/typebox';
import { Identifier, Sha256Schema, Timestamp } from './common';
import { ErrorDetailSchema } from './error';

/** One field both sides changed differently: the value at the base and on each side. */
export const ConflictFieldSchema = Type.Object(
  {
    base: Type.Unknown({ description: 'The value at the base revision; null when it is unknown' }),
    current: Type.Unknown({ description: "The hub's value, which the record keeps" }),
    theirs: Type.Unknown({ description: "The replica's value, kept here until resolved" }),
  },
  { $id: 'ConflictField' },
);

export const CONFLICT_KINDS = ['field', 'delete'] as const;
export type ConflictKind = (typeof CONFLICT_KINDS)[number];

/**
 * A conflict of sync (DESIGN §10), stored in the portfolio's record (`conflicts`) and committed
 * with the change that made it. `field`: the same fields changed on both sides to different
 * values, the record keeps `current`. `delete`: an edit met a delete (the edit won and the
 * portfolio came back) or a delete met an edit its replica had not seen (the portfolio stayed).
 */
export const ConflictSchema = Type.Object(
  {
    conflictId: Type.String({
      minLength: 1,
      maxLength: 128,
      description: '`<portfolioId>.<random>`: names its portfolio',
    }),
    portfolioId: Identifier,
    kind: Type.Union(
      CONFLICT_KINDS.map((kind) => Type.Literal(kind)),
      { description: '"field" or "delete"' },
    ),
    createdTime: Timestamp,
    by: Type.String({ description: 'Username whose device (or session) sent the mutation' }),
    replicaId: Type.String(),
    mutationId: Type.String(),
    baseRevision: Type.Integer({ minimum: 0 }),
    fields: Type.Record(Type.String(), ConflictFieldSchema),
    note: Type.String({ description: 'What happened, in words' }),
  },
  { $id: 'Conflict' },
);

export type ConflictField = Static<typeof ConflictFieldSchema>;
export type Conflict = Static<typeof ConflictSchema>;

/** A mutation the hub applied, kept in the record it changed so a retry finds it (idempotency). */
export const AppliedMutationSchema = Type.Object({
  replicaId: Type.String(),
  mutationId: Type.String(),
  status: Type.String(),
  revision: Type.Integer({ minimum: 1 }),
  conflictId: Type.Optional(Type.String()),
  time: Timestamp,
});
export type AppliedMutation = Static<typeof AppliedMutationSchema>;

// ---- Hello and devices ----

export const SYNC_PROTOCOL = 1;

export const SyncHelloSchema = Type.Object(
  {
    product: Type.Literal('portfolio-manager'),
    protocol: Type.Integer({ minimum: 1, description: 'The sync protocol this server speaks' }),
    version: Type.String({ description: 'The server package version' }),
  },
  { $id: 'SyncHello' },
);

export const ReplicaId = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$',
  description: 'Letters, digits, ".", ":", "-" and "_"; at most 64 characters',
});

export const CreateDeviceBodySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }),
    replicaId: ReplicaId,
  },
  { $id: 'CreateDeviceBody', additionalProperties: false },
);

export const DeviceSchema = Type.Object(
  {
    deviceId: Type.String(),
    name: Type.String(),
    replicaId: Type.String(),
    username: Type.String(),
    createdDate: Timestamp,
    lastSeen: Timestamp,
  },
  { $id: 'Device' },
);

export const CreatedDeviceSchema = Type.Object(
  {
    deviceId: Type.String(),
    token: Type.String({
      description: 'Send as `Authorization: Bearer <token>`; shown once, the hub keeps its hash',
    }),
    name: Type.String(),
    replicaId: Type.String(),
    username: Type.String(),
    createdDate: Timestamp,
  },
  { $id: 'CreatedDevice' },
);

export const DeviceListSchema = Type.Object(
  { devices: Type.Array(DeviceSchema) },
  { $id: 'DeviceList' },
);

export const DeviceListQuerySchema = Type.Object(
  {
    username: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'Admins: only this user’s devices' }),
    ),
  },
  { additionalProperties: false },
);

export const DeviceIdParamsSchema = Type.Object({
  deviceId: Type.String({ minLength: 1, maxLength: 64 }),
});

export type SyncHello = Static<typeof SyncHelloSchema>;
export type CreateDeviceBody = Static<typeof CreateDeviceBodySchema>;
export type Device = Static<typeof DeviceSchema>;
export type CreatedDevice = Static<typeof CreatedDeviceSchema>;

// ---- Mutations ----

export const MUTATION_OPS = ['create', 'update', 'delete', 'restore'] as const;
export type MutationOp = (typeof MUTATION_OPS)[number];
export const MUTATION_STATUSES = [
  'applied',
  'merged',
  'conflict',
  'duplicate',
  'rejected',
] as const;
export type MutationStatus = (typeof MUTATION_STATUSES)[number];

/** An author as history names one: a username, `system`, or empty for unknown. */
const HistoryAuthor = Type.String({
  maxLength: 64,
  description: 'Username that made the change ("" when unknown)',
  'x-words': { maxLength: 'An author name has at most 64 characters.' },
});

/** What every kept revision tells besides its record. */
const revisionStamps = {
  revision: Type.Integer({ minimum: 1 }),
  modifiedTime: Timestamp,
  modifiedBy: HistoryAuthor,
  command: Type.String({ maxLength: 100 }),
  changedFields: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 }),
};

/**
 * The history a create brings along (DESIGN §10, §11): when and by whom the portfolio was made,
 * the stamps of its current revision (the record in `fields`) and its older kept revisions,
 * oldest first, each with its whole record in the shape of `fields`. The hub keeps them as they
 * are; a history out of order, or with a revision not older than the record, refuses the create.
 */
export const CreateHistorySchema = Type.Object(
  {
    createdTime: Timestamp,
    createdBy: HistoryAuthor,
    ...revisionStamps,
    revisions: Type.Array(
      Type.Object(
        {
          ...revisionStamps,
          fields: Type.Record(Type.String(), Type.Unknown(), {
            description: 'The record at that revision, as `fields` of a create',
          }),
        },
        { additionalProperties: false },
      ),
      { maxItems: 1000 },
    ),
  },
  { additionalProperties: false },
);
export type CreateHistory = Static<typeof CreateHistorySchema>;

export const MutationSchema = Type.Object(
  {
    mutationId: Type.String({ minLength: 1, maxLength: 200 }),
    portfolioId: Identifier,
    baseRevision: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'The hub revision the edit started from; 0 or absent for a create',
      }),
    ),
    op: Type.Union(
      MUTATION_OPS.map((op) => Type.Literal(op)),
      { description: 'create, update, delete or restore (from the trash)' },
    ),
    fields: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          'Stored-record field names: the whole record for create, the fields changed since ' +
          'the base for update, {} for delete and restore; each file as {fileId, sha256, ' +
          'originalFilename, description}: the hub computes every other file field from the ' +
          "blob's bytes. Checked per mutation (VALIDATION_FAILED).",
      }),
    ),
    files: Type.Optional(
      // Checked per mutation (VALIDATION_FAILED for that mutation, not the whole batch).
      Type.Array(Type.String({ maxLength: 1000, description: Sha256Schema.description }), {
        maxItems: 1000,
        description:
          'Every blob the fields reference, by its lower-case hex SHA-256; all must be on the hub',
      }),
    ),
    history: Type.Optional(
      Type.Unknown({
        description:
          'create only: the history the portfolio keeps on the replica (createdTime, createdBy, ' +
          'the current revision, modifiedTime, modifiedBy, command, changedFields, and ' +
          '`revisions`: the older kept ones, oldest first, each with its record as `fields`). ' +
          "The hub keeps it as that portfolio's history. Checked per mutation " +
          '(VALIDATION_FAILED, INVALID_HISTORY).',
      }),
    ),
    resolveConflicts: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
        maxItems: 100,
        description: 'Conflicts of this portfolio the replica resolved: the hub removes them too',
      }),
    ),
  },
  { $id: 'Mutation', additionalProperties: false },
);

export const MutationsBodySchema = Type.Object(
  {
    replicaId: ReplicaId,
    mutations: Type.Array(MutationSchema, { maxItems: 100 }),
  },
  { $id: 'MutationsBody', additionalProperties: false },
);

export const MutationResultSchema = Type.Object(
  {
    mutationId: Type.String(),
    status: Type.Union(
      MUTATION_STATUSES.map((status) => Type.Literal(status)),
      { description: 'A retried mutation answers the status it got the first time' },
    ),
    portfolioId: Type.String(),
    revision: Type.Integer({
      minimum: 0,
      description: 'The hub revision after it (0: no such portfolio)',
    }),
    seq: Type.Integer({ minimum: 0, description: 'The change seq of that revision (0: none)' }),
    conflictId: Type.Optional(Type.String()),
    error: Type.Optional(
      Type.Object({
        code: Type.String(),
        message: Type.String(),
        details: Type.Optional(Type.Array(ErrorDetailSchema)),
      }),
    ),
  },
  { $id: 'MutationResult' },
);

export const MutationsResponseSchema = Type.Object(
  { results: Type.Array(MutationResultSchema) },
  { $id: 'MutationsResponse' },
);

// ---- Conflicts API ----

export const ConflictListItemSchema = Type.Composite(
  [ConflictSchema, Type.Object({ projectTitle: Type.String() })],
  { $id: 'ConflictListItem' },
);

export const ConflictListSchema = Type.Object(
  {
    conflicts: Type.Array(ConflictListItemSchema),
    total: Type.Integer(),
    nextPageToken: Type.String({ description: 'Empty on the last page' }),
  },
  { $id: 'ConflictList' },
);

export const PortfolioConflictsSchema = Type.Object(
  { conflicts: Type.Array(ConflictSchema) },
  { $id: 'PortfolioConflicts' },
);

export const ConflictIdParamsSchema = Type.Object({
  conflictId: Type.String({ minLength: 1, maxLength: 128 }),
});

export const ResolveConflictBodySchema = Type.Object(
  {
    keep: Type.Union([Type.Literal('current'), Type.Literal('theirs')], {
      description: "Which side's value each conflicting field keeps",
    }),
    fields: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'Edited values (stored-record names) that override both sides',
      }),
    ),
    revision: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Resolve only if still at this revision' }),
    ),
  },
  { $id: 'ResolveConflictBody', additionalProperties: false },
);

export type Mutation = Static<typeof MutationSchema>;
export type MutationsBody = Static<typeof MutationsBodySchema>;
export type MutationResult = Static<typeof MutationResultSchema>;
export type ConflictListItem = Static<typeof ConflictListItemSchema>;
export type ResolveConflictBody = Static<typeof ResolveConflictBodySchema>;
