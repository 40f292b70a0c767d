import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import {
  CurrentSessionSchema,
  errorResponses,
  SessionSchema,
  SignInBodySchema,
  type SignInBody,
} from '../../shared';
import { caller } from '../plugins/auth';

const errors = errorResponses(400, 401, 429);

export default async function authRoutes(
  app: FastifyInstance,
  options: { requestsPerMinute: number },
) {
  app.post<{ Body: SignInBody }>(
    '/api/v1/appauth',
    {
      schema: {
        tags: ['session'],
        summary: 'Create a session',
        description:
          'Wrong username and wrong password give the same 401. Repeated failures give 429.',
        body: SignInBodySchema,
        response: { 200: SessionSchema, ...errors },
      },
      config: { rateLimit: { max: options.requestsPerMinute, timeWindow: 60_000 } },
    },
    async (request) =>
      app.sessions.signIn(request.body.username, request.body.password, request.ip),
  );

  app.get(
    '/api/v1/appauth',
    {
      onRequest: app.requireSession,
      schema: {
        tags: ['session'],
        summary: "The caller's session and account",
        security: [{ session: [] }],
        response: { 200: CurrentSessionSchema, ...errorResponses(401) },
      },
    },
    async (request) => {
      const { session, user } = caller(request);
      return {
        createdDate: session.createdDate,
        expiredDate: session.expiredDate,
        idleExpiresAt: app.sessions.idleExpiresAt(session),
        user: { username: user.username, role: user.role, allowEdit: user.allowEdit },
      };
    },
  );

  app.delete(
    '/api/v1/appauth',
    {
      onRequest: app.requireSession,
      schema: {
        tags: ['session'],
        summary: 'End the caller’s session (sign out)',
        security: [{ session: [] }],
        response: { 204: Type.Null(), ...errorResponses(401) },
      },
    },
    async (request, reply) => {
      await app.sessions.signOut(caller(request).sessionHash);
      return reply.status(204).send();
    },
  );
}
