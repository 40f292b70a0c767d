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
