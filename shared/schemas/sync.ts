import { Type, type Static } from '@sinclair/typebox';
import { Identifier, Timestamp } from './common';

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
    conflictId: Type.String({ minLength: 1, maxLength: 64 }),
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
