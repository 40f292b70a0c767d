import type { FastifyInstance } from 'fastify';
import {
  CurrentSessionSchema,
  SessionSchema,
  SignInBodySchema,
  type SignInBody,
} from '../../shared';
import { clearedSessionCookie, sessionCookie } from '../http/session-cookie';
import { empty, errors, json, HEADERS } from '../openapi/responses';
import { caller } from '../plugins/auth';

export default async function authRoutes(
  app: FastifyInstance,
  options: { requestsPerMinute: number },
) {
  app.post<{ Body: SignInBody }>(
    '/api/v1/appauth',
    {
      schema: {
        operationId: 'signIn',
        tags: ['session'],
        summary: 'Create a session',
        description:
          'Wrong username and wrong password give the same 401. Repeated failures give 429.',
        security: [],
        body: SignInBodySchema,
        response: {
          200: json(
            SessionSchema,
            'Signed in: send `sessionId` as the Authorization header. A browser also keeps the ' +
              'session as an HttpOnly cookie (the `webSession` scheme).',
            { 'Set-Cookie': HEADERS.sessionCookie },
          ),
          ...errors('INVALID_CREDENTIALS', 'TOO_MANY_ATTEMPTS'),
        },
      },
      config: { rateLimit: { max: options.requestsPerMinute, timeWindow: 60_000 } },
    },
    async (request, reply) => {
      const session = await app.sessions.signIn(
        request.body.username,
        request.body.password,
        request.ip,
      );
      const lifetimeMs = session.expiredDate - session.createdDate;
      void reply.header('set-cookie', sessionCookie(request, session.sessionId, lifetimeMs));
      return session;
    },
  );

  app.get(
    '/api/v1/appauth',
    {
      onRequest: app.requireSession,
      // A device token may see whom it acts for and sign itself out (revoking the device).
      config: { deviceToken: true },
      schema: {
        operationId: 'getCurrentSession',
        tags: ['session'],
        summary: "The caller's session and account",
        security: [{ session: [] }],
        response: { 200: json(CurrentSessionSchema, 'The session and who holds it') },
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
      // A device token may see whom it acts for and sign itself out (revoking the device).
      config: { deviceToken: true },
      schema: {
        operationId: 'signOut',
        tags: ['session'],
        summary: 'End the caller’s session (sign out)',
        security: [{ session: [] }],
        response: {
          204: empty('Signed out: the session id no longer works, and the cookie is cleared', {
            'Set-Cookie': HEADERS.clearedSessionCookie,
          }),
        },
      },
    },
    async (request, reply) => {
      await app.sessions.signOut(caller(request));
      return reply.status(204).header('set-cookie', clearedSessionCookie(request)).send();
    },
  );
}
