import { Type, type TSchema } from '@sinclair/typebox';
import { ERROR_CODES, ErrorBodySchema, type ErrorCode } from '../../shared';

/**
 * How routes declare their answers, for the serializer and the OpenAPI document alike. Each
 * answer is Fastify's content form (`{description, headers, content}`), which keeps the schema
 * objects themselves: every error status serializes with the one ErrorBody schema, compiled once
 * (see the serializer cache in plugins/validation.ts).
 */

/** Where an error answer keeps its codes for server/openapi/document.ts; Fastify ignores it. */
export const ERROR_CODES_KEY = 'x-error-codes';

export interface HeaderDoc {
  type: 'string' | 'integer';
  description: string;
}

/** Response headers, as the document declares them. */
export const HEADERS = {
  revisionEtag: {
    type: 'string',
    description: 'The portfolio revision, quoted: `"3"`. Send it back as If-Match.',
  },
  fileEtag: { type: 'string', description: 'The MD5 of the bytes, quoted: `"<md5>"`.' },
  thumbnailEtag: { type: 'string', description: 'The file MD5 and width: `"<md5>-w256"`.' },
  contentDisposition: {
    type: 'string',
    description: '`inline` for raster images, `attachment` otherwise; with a safe filename.',
  },
  contentRange: { type: 'string', description: '`bytes <first>-<last>/<size>`' },
  unsatisfiedRange: { type: 'string', description: '`bytes */<size>`' },
  contentLength: { type: 'integer', description: 'Bytes in this answer' },
  acceptRanges: { type: 'string', description: '`bytes`' },
  retryAfter: { type: 'integer', description: 'Seconds to wait before trying again' },
  uploadOffset: {
    type: 'integer',
    description:
      'Bytes of a partial blob upload kept: continue with `Content-Range: bytes <this>-…`',
  },
  sessionCookie: {
    type: 'string',
    description:
      '`portfolio_session_<port>=<sessionId>; Max-Age=<lifetime s>; Path=/api; HttpOnly; ' +
      'SameSite=Strict` (`Secure` over TLS; no `_<port>` when the address has none)',
  },
  clearedSessionCookie: {
    type: 'string',
    description: '`portfolio_session_<port>=; Max-Age=0; Path=/api; HttpOnly; SameSite=Strict`',
  },
  blobEtag: { type: 'string', description: 'The SHA-256 of the bytes, quoted: `"<sha256>"`.' },
} as const satisfies Record<string, HeaderDoc>;

type Headers = Record<string, HeaderDoc>;

export interface JsonResponse<S extends TSchema> {
  description: string;
  headers?: Headers;
  content: { 'application/json': { schema: S } };
}

/** A JSON answer. */
export function json<S extends TSchema>(
  schema: S,
  description: string,
  headers?: Headers,
): JsonResponse<S> {
  return { description, ...(headers && { headers }), content: { 'application/json': { schema } } };
}

/** An answer without a body (204, 304). */
export function empty(description: string, headers?: Headers) {
  return Type.Null({ description, ...(headers && { headers }) });
}

/** Bytes of the given media type (`*\/*` for whatever the file is). */
export function binary(mediaType: string, description: string, headers: Headers) {
  return {
    description,
    headers,
    content: { [mediaType]: { schema: Type.String({ format: 'binary' }) } },
  };
}

export interface ErrorResponse extends JsonResponse<typeof ErrorBodySchema> {
  [ERROR_CODES_KEY]: ErrorCode[];
}

/**
 * The error answers a route gives of its own, one per status, each listing its codes. Errors of
 * the plumbing every route shares (session, validation, body parsing, rate limits, faults) are
 * added by plugins/api-docs.ts from the route's shape, in one place.
 */
export function errors(...codes: ErrorCode[]): Record<number, ErrorResponse> {
  const byStatus: Record<number, ErrorResponse> = {};
  for (const code of codes) {
    const status = ERROR_CODES[code].statusCode;
    byStatus[status] ??= {
      ...json(ErrorBodySchema, 'Error'),
      [ERROR_CODES_KEY]: [],
    };
    byStatus[status][ERROR_CODES_KEY].push(code);
  }
  return byStatus;
}

const IfNoneMatch = Type.Optional(
  Type.String({ description: 'An ETag the caller holds: 304 without a body when it is current' }),
);

/** Request headers of a file download: conditional and ranged (RFC 9110). */
export const FileDownloadHeadersSchema = Type.Object({
  'if-none-match': IfNoneMatch,
  range: Type.Optional(
    Type.String({
      description:
        'One byte range: `bytes=0-1023`, `bytes=1024-` or `bytes=-512` (206; 416 when outside the file). ' +
        'Several ranges or other units get the whole file.',
    }),
  ),
  'if-range': Type.Optional(
    Type.String({
      description: 'The ETag the Range is meant for; another one gets the whole file',
    }),
  ),
});

export const ThumbnailHeadersSchema = Type.Object({ 'if-none-match': IfNoneMatch });
