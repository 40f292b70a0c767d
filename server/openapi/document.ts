import { isDeepStrictEqual } from 'node:util';
import { ERROR_CODES, ErrorBodySchema, type ErrorCode } from '../../shared';
import { ERROR_CODES_KEY, HEADERS, type ErrorResponse, type HeaderDoc } from './responses';

/**
 * How the OpenAPI document is made from the route schemas (used by plugins/api-docs.ts through
 * @fastify/swagger's `transform` and `transformObject`):
 * - a shared schema with an `$id` becomes the component of that name, referenced wherever it is
 *   used; two different schemas with one name fail the build;
 * - every route has an `operationId` (HEAD routes get `<operationId>Head`);
 * - each operation lists every status it can answer, with the codes: its own, declared with
 *   `errors(...)`, and those the shared plumbing adds, derived here from the route's shape.
 */

type Json = Record<string, unknown>;
type RouteSchema = Json & { response?: Record<string, unknown> };

export interface RouteInfo {
  method: string | string[];
  url: string;
  schema?: RouteSchema;
  config?: { rateLimit?: unknown; deviceToken?: boolean };
}

/** Marks a schema to be moved into components.schemas under this name. */
const COMPONENT_KEY = 'x-component';
const COMPONENT_PREFIX = '#/components/schemas/';
const SESSION_SECURITY = 'session';
/** The web UI's cookie (server/http/session-cookie.ts), accepted wherever the session is. */
const COOKIE_SECURITY = 'webSession';
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function methodsOf(route: RouteInfo): string[] {
  return typeof route.method === 'string' ? [route.method] : route.method;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Headers sent with every answer of a status, whatever the route. */
const STATUS_HEADERS: Record<number, Record<string, HeaderDoc>> = {
  416: { 'Content-Range': HEADERS.unsatisfiedRange },
  429: { 'Retry-After': HEADERS.retryAfter },
  503: { 'Retry-After': HEADERS.retryAfter },
};

/**
 * A copy of a route schema (TypeBox's symbols left behind) in which each schema with an `$id`
 * carries its name under COMPONENT_KEY instead, a key @fastify/swagger passes through untouched.
 */
function tagComponents(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tagComponents);
  if (!isObject(node)) return node;
  const copy: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (key !== '$id') copy[key] = tagComponents(value);
  }
  if (typeof node.$id === 'string') copy[COMPONENT_KEY] = node.$id;
  return copy;
}

function hasSession(route: RouteInfo): boolean {
  const security = route.schema?.security as Array<Record<string, unknown>> | undefined;
  return security?.some((requirement) => SESSION_SECURITY in requirement) ?? false;
}

/** Wherever the session header is accepted, the web UI's cookie is too. */
function securityOf(route: RouteInfo): Array<Record<string, unknown>> | undefined {
  const security = route.schema?.security as Array<Record<string, unknown>> | undefined;
  return hasSession(route) ? [...security!, { [COOKIE_SECURITY]: [] }] : security;
}

/** The error codes the shared plumbing can answer on this route, whatever its handler does. */
function plumbingErrors(route: RouteInfo): ErrorCode[] {
  const schema = route.schema ?? {};
  // Node refuses any request whose request line and headers pass 16 KB (413), or that trickle in
  // past the headers timeout (408), before a route sees it (server/http/client-error.ts).
  const codes: ErrorCode[] = [
    'HOST_NOT_ALLOWED',
    'INTERNAL',
    'PAYLOAD_TOO_LARGE',
    'REQUEST_TIMEOUT',
  ];
  const writes = methodsOf(route).some((method) => WRITE_METHODS.has(method));
  if (writes) codes.push('STORAGE_FAILURE');
  // On PostgreSQL, any API call may find the database gone (server/plugins/error-handler.ts).
  if (route.url.startsWith('/api/')) codes.push('DATABASE_UNAVAILABLE');
  if (hasSession(route)) {
    codes.push('UNAUTHORIZED', 'SESSION_EXPIRED', 'DEVICE_REVOKED');
    if (!route.config?.deviceToken) codes.push('DEVICE_TOKEN_NOT_ALLOWED');
    if (methodsOf(route).some((method) => WRITE_METHODS.has(method)))
      codes.push('CLIENT_HEADER_REQUIRED');
  }
  if (schema.body || schema.params || schema.querystring || schema.headers) {
    codes.push('VALIDATION_FAILED');
  }
  if (schema.body || writes) {
    // An operation that takes no body (a DELETE, `POST /sync/run`) ignores a JSON one, but a body
    // is parsed as its Content-Type says first: one that is not JSON is refused like any other.
    codes.push('MALFORMED_JSON', 'UNSUPPORTED_MEDIA_TYPE');
  }
  if (route.config?.rateLimit) codes.push('RATE_LIMITED');
  return codes;
}

function errorDescription(codes: ErrorCode[]): string {
  return codes.map((code) => `\`${code}\`: ${ERROR_CODES[code].message}`).join('<br>');
}

/**
 * The error answer of one status: the ErrorBody, its `code` narrowed to what can happen; with
 * the headers every answer of that status has, and those the route declared for it.
 */
function errorResponse(status: number, codes: ErrorCode[], declared?: Record<string, HeaderDoc>) {
  const headers = { ...STATUS_HEADERS[status], ...declared };
  return {
    description: errorDescription(codes),
    ...(Object.keys(headers).length > 0 && { headers }),
    content: {
      'application/json': {
        schema: {
          allOf: [
            ErrorBodySchema,
            {
              type: 'object',
              required: ['code'],
              properties: { code: { type: 'string', enum: codes } },
            },
          ],
        },
      },
    },
  };
}

function responsesOf(route: RouteInfo): Record<string, unknown> {
  const declared = route.schema?.response ?? {};
  const codesByStatus = new Map<number, ErrorCode[]>();
  const headersByStatus = new Map<number, Record<string, HeaderDoc>>();
  const responses: Record<string, unknown> = {};
  for (const [status, response] of Object.entries(declared)) {
    const error = isObject(response) ? (response as Partial<ErrorResponse>) : undefined;
    const codes = error?.[ERROR_CODES_KEY];
    if (!codes) {
      responses[status] = response;
      continue;
    }
    codesByStatus.set(Number(status), [...codes]);
    if (error.headers) headersByStatus.set(Number(status), error.headers);
  }
  for (const code of plumbingErrors(route)) {
    const status = ERROR_CODES[code].statusCode;
    const codes = codesByStatus.get(status) ?? [];
    if (!codes.includes(code)) codes.push(code);
    codesByStatus.set(status, codes);
  }
  for (const [status, codes] of codesByStatus) {
    responses[status] = errorResponse(status, codes, headersByStatus.get(status));
  }
  return responses;
}

/** HEAD answers carry the headers of GET's answers and no body. */
function withoutBodies(responses: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(responses).map(([status, response]) => {
      const { description, headers } = response as { description: string; headers?: unknown };
      return [status, { type: 'null', description, ...(headers ? { headers } : {}) }];
    }),
  );
}

function operationIdOf(route: RouteInfo): string {
  const operationId = route.schema?.operationId;
  if (typeof operationId !== 'string' || operationId === '') {
    throw new Error(`${methodsOf(route).join(',')} ${route.url} has no operationId in its schema.`);
  }
  // @fastify/swagger names the HEAD twin of a GET `<operationId>-head`.
  return operationId.replace(/-head$/, 'Head');
}

/** The schema @fastify/swagger documents for one route. */
export function documentRoute(route: RouteInfo): { schema: Json; url: string } {
  if (route.schema?.hide) return { schema: route.schema, url: route.url };
  const operationId = operationIdOf(route);
  const responses = responsesOf(route);
  const schema = tagComponents({
    ...route.schema,
    ...(hasSession(route) && { security: securityOf(route) }),
    operationId,
    response: route.method === 'HEAD' ? withoutBodies(responses) : responses,
  }) as Json;
  return { schema, url: route.url };
}

/** Throws when a documented route has no operationId: at registration, so no route slips by. */
export function assertOperationId(route: RouteInfo): void {
  if (!route.schema?.hide) operationIdOf(route);
}

/**
 * Moves each tagged schema into components.schemas and puts a `$ref` in its place. Children
 * first, so a component refers to the components inside it.
 */
export function extractComponents<T extends Json>(document: T): T {
  const components: Record<string, unknown> = {};
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (!isObject(node)) return node;
    const copy: Json = {};
    for (const [key, value] of Object.entries(node)) copy[key] = visit(value);
    const name = copy[COMPONENT_KEY];
    if (typeof name !== 'string') return copy;
    delete copy[COMPONENT_KEY];
    if (!(name in components)) components[name] = copy;
    else if (!isDeepStrictEqual(components[name], copy)) {
      throw new Error(`Two different schemas are named "${name}"; give one of them another $id.`);
    }
    return { $ref: COMPONENT_PREFIX + name };
  };
  const paths = visit(document.paths) as Json;
  const existing = (document.components ?? {}) as Json;
  const schemas = { ...(existing.schemas as Json | undefined), ...components };
  const sorted = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
  markOptionalBodies(paths, sorted);
  return { ...document, paths, components: { ...existing, schemas: sorted } };
}

/**
 * @fastify/swagger calls every request body required. One whose schemas require no key (a
 * restore's `{"revision": n}`) may be left out, and the server takes none as `{}`: say so.
 */
function markOptionalBodies(paths: Json, schemas: Json): void {
  const resolve = (schema: unknown): Json => {
    const ref = isObject(schema) ? schema.$ref : undefined;
    if (typeof ref === 'string') return resolve(schemas[ref.slice(COMPONENT_PREFIX.length)]);
    return isObject(schema) ? schema : {};
  };
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item as Json)) {
      const body = isObject(operation) ? operation.requestBody : undefined;
      if (!isObject(body) || !isObject(body.content)) continue;
      const media = Object.values(body.content).map((type) => resolve((type as Json).schema));
      const requiresNothing = (schema: Json) =>
        !(Array.isArray(schema.required) && schema.required.length > 0) && !schema.minProperties;
      if (media.every(requiresNothing)) body.required = false;
    }
  }
}
