import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import type { Role } from '../../shared';
import { SessionService, type Authenticated } from '../auth/session-service';
import type { AuthOptions } from '../config';
import { ApiError } from '../errors';
import {
  clearedSessionCookie,
  needsClientHeader,
  sessionIdFromCookie,
} from '../http/session-cookie';

declare module 'fastify' {
  interface FastifyInstance {
    sessions: SessionService;
    /** onRequest hook: a valid session is required; sets `request.auth`. */
    requireSession: onRequestHookHandler;
    /**
     * Hook factory: the session's user must have one of `roles`. Used as a route's `onRequest`,
     * it refuses before the body is read (DESIGN §13: 403, never 400, for who may not call).
     */
    requireRole: (...roles: Role[]) => onRequestHookHandler;
  }
  interface FastifyRequest {
    auth: Authenticated | null;
  }
  interface FastifyContextConfig {
    /**
     * A device token may call this route: the endpoints a sync replica uses (DESIGN §10). On
     * every other route behind `requireSession` a device token is refused with 403, before the
     * body is read.
     */
    deviceToken?: boolean;
  }
}

/** A device token outside the sync endpoints (see FastifyContextConfig.deviceToken). */
function outOfScope(request: FastifyRequest, authenticated: Authenticated): ApiError | undefined {
  if (authenticated.session.kind !== 'device' || request.routeOptions.config.deviceToken) return;
  return new ApiError('DEVICE_TOKEN_NOT_ALLOWED');
}

/** The signed-in caller; only valid on routes behind `requireSession`. */
export function caller(request: FastifyRequest): Authenticated {
  if (!request.auth) throw new ApiError('UNAUTHORIZED');
  return request.auth;
}

export default fp(
  async function auth(app: FastifyInstance, options: { config: AuthOptions }) {
    const sessions = new SessionService(app.userRepository, options.config);
    app.decorate('sessions', sessions);
    app.decorateRequest('auth', null);

    // Callback-style hooks: they run on every request, and an async hook costs a promise and a
    // microtask turn more (the embedded store answers at once; PostgreSQL needs a query).
    // The Authorization header wins; without one, the web UI's cookie (http/session-cookie.ts)
    // stands in for it, and a change made with the cookie alone must carry X-Portfolio-Client.
    app.decorate('requireSession', function requireSession(request, reply, done) {
      const header = request.headers.authorization;
      const cookie = header === undefined ? sessionIdFromCookie(request) : undefined;
      if (cookie !== undefined && needsClientHeader(request))
        return done(new ApiError('CLIENT_HEADER_REQUIRED'));
      // A cookie whose session has ended is cleared, so the browser stops sending it.
      const failed = (error: Error) => {
        if (cookie !== undefined && error instanceof ApiError && error.statusCode === 401)
          void reply.header('set-cookie', clearedSessionCookie(request));
        done(error);
      };
      let found: ReturnType<SessionService['authenticate']>;
      try {
        found = sessions.authenticate(header ?? cookie);
      } catch (error) {
        return failed(error as Error);
      }
      if (!(found instanceof Promise)) {
        request.auth = found;
        return done(outOfScope(request, found));
      }
      found.then((authenticated) => {
        request.auth = authenticated;
        done(outOfScope(request, authenticated));
      }, failed);
    } satisfies onRequestHookHandler);
    app.decorate(
      'requireRole',
      (...roles: Role[]): onRequestHookHandler =>
        (request, _reply, done) => {
          if (roles.includes(caller(request).user.role)) return done();
          done(new ApiError('FORBIDDEN', `This needs the ${roles.join(' or ')} role.`));
        },
    );

    // Where instances share the backend, one at a time sweeps.
    const sweepOnce = () =>
      app.backend.runJob('sessionSweep', async () => {
        await sessions.sweepExpired();
        await app.backend.sweep();
      });
    const sweep = setInterval(() => void sweepOnce().catch(() => {}), 10 * 60_000);
    sweep.unref();
    app.addHook('onClose', async () => clearInterval(sweep));
  },
  { name: 'auth', dependencies: ['storage'] },
);
