import { Type, type Static } from '@sinclair/typebox';

/** The replica's control API (DESIGN §10): sign in to a hub once, run rounds, watch them. */

export const SyncConfigBodySchema = Type.Object(
  {
    hubUrl: Type.String({ minLength: 1, maxLength: 2000, description: 'e.g. http://hub:8080' }),
    username: Type.String({ minLength: 1, maxLength: 200 }),
    password: Type.String({
      minLength: 1,
      maxLength: 1000,
      description: 'Used once, never stored',
    }),
  },
  { $id: 'SyncConfigBody', additionalProperties: false },
);

export const SyncConfigSchema = Type.Object(
  {
    configured: Type.Literal(true),
    hubUrl: Type.String(),
    username: Type.String(),
    deviceId: Type.String({
      description: "This device's id on the hub (listed in its Users screen)",
    }),
    replicaId: Type.String({ description: 'Names this library in its mutations' }),
  },
  { $id: 'SyncConfig' },
);

/** No hub is set up: an answer, not an error, so a page asking does not log a failure. */
export const SyncNotConfiguredSchema = Type.Object(
  {
    configured: Type.Literal(false),
    available: Type.Boolean({
      description: 'Whether this instance can sync at all (the embedded store can; PostgreSQL not)',
    }),
  },
  { $id: 'SyncNotConfigured' },
);

export const SyncConfigStateSchema = Type.Union([SyncConfigSchema, SyncNotConfiguredSchema], {
  $id: 'SyncConfigState',
});

export const SyncRoundSummarySchema = Type.Object(
  {
    pulled: Type.Integer({ description: 'Hub changes applied here' }),
    pushed: Type.Integer({ description: 'Local changes sent to the hub' }),
    conflicts: Type.Integer({ description: 'Conflicts this round made (here or on the hub)' }),
    blobsUp: Type.Integer(),
    blobsDown: Type.Integer(),
    bytesUp: Type.Integer(),
    bytesDown: Type.Integer(),
    durationMs: Type.Integer(),
  },
  { $id: 'SyncRoundSummary' },
);

export const SyncStatusSchema = Type.Object(
  {
    state: Type.Union(
      [
        Type.Literal('idle'),
        Type.Literal('running'),
        Type.Literal('error'),
        Type.Literal('offline'),
      ],
      { description: '`offline`: the hub cannot be reached; rounds back off and try again' },
    ),
    lastSuccess: Type.Union([Type.Integer(), Type.Null()], {
      description: 'When the last round ended well (ms since the epoch)',
    }),
    lastError: Type.Union([
      Type.Object({
        code: Type.String(),
        message: Type.String({ description: 'In words, for a person' }),
        time: Type.Integer(),
      }),
      Type.Null(),
    ]),
    pending: Type.Object({
      changes: Type.Integer({ description: 'Local changes not yet on the hub' }),
      blobs: Type.Integer({ description: 'Files those changes refer to' }),
      bytes: Type.Integer(),
    }),
    progress: Type.Object({
      done: Type.Integer({ description: 'Records pulled and pushed so far this round' }),
      total: Type.Integer({ description: 'Records known to do this round (grows while pulling)' }),
      bytes: Type.Integer({ description: 'File bytes moved so far this round' }),
    }),
    conflicts: Type.Integer({ description: 'Unresolved conflicts in this library' }),
  },
  { $id: 'SyncStatus' },
);

export type SyncConfigBody = Static<typeof SyncConfigBodySchema>;
export type SyncConfigView = Static<typeof SyncConfigSchema>;
export type SyncConfigState = Static<typeof SyncConfigStateSchema>;
export type SyncRoundSummaryView = Static<typeof SyncRoundSummarySchema>;
export type SyncStatusView = Static<typeof SyncStatusSchema>;
