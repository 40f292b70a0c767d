import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifySchemaCompiler,
  onRequestHookHandler,
} from 'fastify';
import { caller } from '../plugins/auth';
import type { Caller } from '../services/portfolio-service';
import type { IfMatchRevision } from '../domain/portfolio-rules';
import type { Condition } from '../services/portfolio-service';

/**
 * Route option for routes whose body the service validates. The service checks role and
 * category first and only then the body, so a caller who may not make the change learns nothing
 * of the schema (403, never 400; DESIGN §13). `schema.body` stays on the route for the OpenAPI
 * document and is compiled by the service with the same validator, so an invalid body gets the
 * same VALIDATION_FAILED details as anywhere else; params, query and headers are validated here
 * as on every route.
 */
export function bodyValidatedByService(app: FastifyInstance): FastifySchemaCompiler<unknown> {
  const compile = app.validatorCompiler;
  if (!compile) throw new Error('register the validation plugin before the routes');
  return (route) => (route.httpPart === 'body' ? () => true : compile(route));
}

/** The conditional part of a change request (DESIGN §3): `If-Match: "<revision>"`. */
export function conditionOf(request: FastifyRequest): Condition {
  return { ifMatch: ifMatchRevision(request.headers['if-match']) };
}

/** `"3"`, `3` or `W/"3"` name revision 3; `*` or nothing, any; anything else is malformed. */
export function ifMatchRevision(header: string | undefined): IfMatchRevision {
  if (header === undefined || header.trim() === '*') return undefined;
  const match = /^(?:W\/)?"?(\d+)"?$/.exec(header.trim());
  return match ? Number(match[1]) : 'malformed';
}

/** Every answer about one portfolio carries its revision as the ETag. */
export function withRevision(reply: FastifyReply, record: { revision: number }): FastifyReply {
  return reply.header('etag', `"${record.revision}"`);
}

/**
 * An `onRequest` hook that authorizes the caller against the stored record before a byte of the
 * body is read. Params the route's schema refuses are left to validation, which answers 400 next.
 */
export function authorizeBeforeBody<Params>(
  check: (user: Caller, params: Params, request: FastifyRequest) => Promise<unknown>,
): onRequestHookHandler {
  return async function authorize(request) {
    if (request.getValidationFunction('params')?.(request.params) === false) return;
    await check(caller(request).user, request.params as Params, request);
  };
}
