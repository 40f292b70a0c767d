import type { FastifyInstance } from 'fastify';
import {
  SyncConfigBodySchema,
  SyncConfigSchema,
  SyncConfigStateSchema,
  SyncRoundSummarySchema,
  SyncStatusSchema,
  type ErrorCode,
  type SyncConfigBody,
} from '../../shared';
import { ApiError } from '../errors';
import { empty, errors, json } from '../openapi/responses';
import type { Replica, SyncConfig } from '../sync/replica';
import { SyncError } from '../sync/sync-error';

/** The config as the API shows it: never the token. */
function configView({ hubUrl, username, deviceId, replicaId }: SyncConfig) {
  return { configured: true as const, hubUrl, username, deviceId, replicaId };
}

/** A sync failure as the one error shape, its words kept. */
function apiErrorOf(error: unknown): unknown {
  if (!(error instanceof SyncError)) return error;
  const code: ErrorCode = error.code === 'SYNC_REJECTED' ? 'HUB_ERROR' : error.code;
  return new ApiError(code, error.message);
}

const SYNC_ERRORS = [
  'HUB_UNREACHABLE',
  'HUB_NOT_PORTFOLIO',
  'HUB_TOO_OLD',
  'HUB_SIGN_IN_FAILED',
  'HUB_ERROR',
  'SYNC_DEVICE_REVOKED',
  'SYNC_REPLICA_ID_TAKEN',
  'DISK_FULL',
] as const;

/** The replica's control API (DESIGN §10), admin only. */
export default async function syncControlRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSession);
  app.addHook('onRequest', app.requireRole('admin'));
  const common = { tags: ['sync-replica'], security: [{ session: [] }] };
  const replica = (): Replica => {
    if (!app.replica) throw new ApiError('SYNC_UNAVAILABLE');
    return app.replica;
  };

  app.put<{ Body: SyncConfigBody }>(
    '/api/v1/sync/config',
    {
      schema: {
        ...common,
        operationId: 'configureSync',
        summary: 'Sign in to a hub once and sync with it',
        description:
          'Admins. Checks the hub (`GET /api/v1/sync/hello`), signs in with the password once, ' +
          'registers this instance as a device and keeps only the device token (sealed). ' +
          'A background round starts at once.',
        body: SyncConfigBodySchema,
        response: {
          200: json(SyncConfigSchema, 'Configured'),
          ...errors('FORBIDDEN', ...SYNC_ERRORS, 'SYNC_UNAVAILABLE'),
        },
      },
    },
    async (request) => {
      const { hubUrl, username, password } = request.body;
      const config = await replica()
        .configure(hubUrl, username, password)
        .catch((error: unknown) => {
          throw apiErrorOf(error);
        });
      return configView(config);
    },
  );

  app.get(
    '/api/v1/sync/config',
    {
      schema: {
        ...common,
        operationId: 'getSyncConfig',
        summary: 'The hub this instance syncs with, or that none is set up',
        response: {
          200: json(
            SyncConfigStateSchema,
            'The hub, account and device; or `configured: false` when no hub is set up',
          ),
          ...errors('FORBIDDEN'),
        },
      },
    },
    async () => {
      const config = app.replica?.config();
      return config
        ? configView(config)
        : { configured: false as const, available: app.replica !== undefined };
    },
  );

  app.delete(
    '/api/v1/sync/config',
    {
      schema: {
        ...common,
        operationId: 'forgetSync',
        summary: 'Forget the hub',
        description:
          'Admins. Stops syncing and drops the device token; local portfolios stay as they are. ' +
          "Revoke the device in the hub's Users screen to end it there too.",
        response: { 204: empty('Forgotten'), ...errors('FORBIDDEN', 'SYNC_UNAVAILABLE') },
      },
    },
    async (_request, reply) => {
      await replica().forget();
      return reply.status(204).send();
    },
  );

  app.post(
    '/api/v1/sync/run',
    {
      schema: {
        ...common,
        operationId: 'runSync',
        summary: 'Run one sync round now',
        description:
          'Admins. Pulls the hub changes, pushes local ones (files first), pulls again what ' +
          'the push made, and answers when the round ends (joins one already running).',
        response: {
          200: json(SyncRoundSummarySchema, 'The round'),
          ...errors('FORBIDDEN', 'SYNC_NOT_CONFIGURED', ...SYNC_ERRORS, 'SYNC_UNAVAILABLE'),
        },
      },
    },
    async () =>
      replica()
        .run()
        .catch((error: unknown) => {
          throw apiErrorOf(error);
        }),
  );

  app.get(
    '/api/v1/sync/status',
    {
      schema: {
        ...common,
        operationId: 'getSyncStatus',
        summary: 'Sync state, progress, pending changes and the last error in words',
        response: {
          200: json(SyncStatusSchema, 'The status'),
          ...errors('FORBIDDEN', 'SYNC_UNAVAILABLE'),
        },
      },
    },
    async () => replica().status(),
  );
}
