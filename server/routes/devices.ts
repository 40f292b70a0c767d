import type { FastifyInstance } from 'fastify';
import {
  CreateDeviceBodySchema,
  CreatedDeviceSchema,
  DeviceIdParamsSchema,
  DeviceListQuerySchema,
  DeviceListSchema,
  SYNC_PROTOCOL,
  SyncHelloSchema,
} from '../../shared';
import { empty, errors, json } from '../openapi/responses';
import { caller } from '../plugins/auth';
import { bodyValidatedByService } from './route-support';

/** Sync identity (DESIGN §10): what this server is, and the device tokens replicas hold. */
export default async function deviceRoutes(app: FastifyInstance, options: { version: string }) {
  const service = app.deviceService;
  const common = { tags: ['sync'], security: [{ session: [] }] };

  app.get(
    '/api/v1/sync/hello',
    {
      schema: {
        tags: ['sync'],
        security: [],
        operationId: 'syncHello',
        summary: 'What this server is, for a replica checking its hub',
        description:
          'No session needed. A replica refuses a hub whose `product` differs or whose ' +
          '`protocol` is lower than it needs.',
        response: { 200: json(SyncHelloSchema, 'The product, its sync protocol and version') },
      },
    },
    async () => ({
      product: 'portfolio-manager' as const,
      protocol: SYNC_PROTOCOL,
      version: options.version,
    }),
  );

  app.register(async (devices) => {
    devices.addHook('onRequest', app.requireSession);

    devices.post(
      '/api/v1/devices',
      {
        onRequest: app.requireRole('editor', 'admin'),
        schema: {
          ...common,
          operationId: 'createDevice',
          summary: 'Exchange a password session for a device token',
          description:
            'Editors and admins, signed in with a password (not a device token). The token is ' +
            'shown once; the hub keeps only its SHA-256. It reaches only the sync endpoints ' +
            '(elsewhere 403 DEVICE_TOKEN_NOT_ALLOWED) and acts with the current rights of its ' +
            "user until revoked, its user's password or role changes, or it is unused for 90 " +
            'days. A replica id held by a live ' +
            "device of another user is 409 REPLICA_ID_TAKEN; the caller's own older device for " +
            'the same replica is revoked (the replica signed in again).',
          body: CreateDeviceBodySchema,
          response: {
            201: json(CreatedDeviceSchema, 'The device and its token'),
            ...errors('FORBIDDEN', 'REPLICA_ID_TAKEN'),
          },
        },
        validatorCompiler: bodyValidatedByService(app),
      },
      async (request, reply) =>
        reply.status(201).send(await service.create(caller(request), request.body)),
    );

    devices.get<{ Querystring: { username?: string } }>(
      '/api/v1/devices',
      {
        schema: {
          ...common,
          operationId: 'listDevices',
          summary: 'Device tokens: your own; an admin sees all',
          description:
            'Live (not revoked) devices. Admins see every user’s and may filter with ' +
            '`username`; anyone else only their own (another username is 403).',
          querystring: DeviceListQuerySchema,
          response: {
            200: json(DeviceListSchema, 'The devices'),
            ...errors('FORBIDDEN'),
          },
        },
      },
      async (request) => ({
        devices: await service.list(caller(request), request.query.username),
      }),
    );

    devices.delete<{ Params: { deviceId: string } }>(
      '/api/v1/devices/:deviceId',
      {
        schema: {
          ...common,
          operationId: 'revokeDevice',
          summary: 'Sign a device out of the hub',
          description:
            'Your own device, or any as an admin. Its token answers 401 DEVICE_REVOKED from now on.',
          params: DeviceIdParamsSchema,
          response: {
            204: empty('Revoked'),
            ...errors('DEVICE_NOT_FOUND'),
          },
        },
      },
      async (request, reply) => {
        await service.revoke(caller(request), request.params.deviceId);
        return reply.status(204).send();
      },
    );
  });
}
