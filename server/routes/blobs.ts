import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Sha256Schema } from '../../shared';
import { ApiError } from '../errors';
import { caller } from '../plugins/auth';
import {
  acceptRawBodies,
  declaredLength,
  rawBodiesUnvalidated,
  rawBodyOf,
  readRawBody,
} from '../http/raw-body';
import { etagMatches, parseRange } from '../media/conditional-get';
import {
  binary,
  empty,
  errors,
  FileDownloadHeadersSchema,
  HEADERS,
  json,
  type ErrorResponse,
} from '../openapi/responses';
import type { Piece } from '../services/blob-service';

type Params = { sha256: string };

const Sha256 = Sha256Schema;
const Sha256ParamsSchema = Type.Object({ sha256: Sha256 });

const MissingBlobsBodySchema = Type.Object(
  { sha256: Type.Array(Sha256, { maxItems: 1000 }) },
  { $id: 'MissingBlobsBody', additionalProperties: false },
);
const MissingBlobsSchema = Type.Object(
  { missing: Type.Array(Sha256, { description: 'Those the server lacks, in request order' }) },
  { $id: 'MissingBlobs', additionalProperties: false },
);
const BlobUploadSchema = Type.Object(
  {
    sha256: Sha256,
    size: Type.Integer({ minimum: 0, description: 'The blob size in bytes' }),
    offset: Type.Optional(
      Type.Integer({ minimum: 0, description: 'Bytes kept so far (202: the upload is partial)' }),
    ),
  },
  { $id: 'BlobUpload', additionalProperties: false },
);
const RAW_BLOB_DOC = {
  $id: 'RawBlob',
  type: 'string',
  format: 'binary',
  description: 'The bytes of the blob, or of the piece of it that Content-Range names',
};
const BlobUploadHeadersSchema = Type.Object({
  'content-range': Type.Optional(
    Type.String({
      maxLength: 100,
      description:
        'Continues a partial upload: `bytes <first>-<last>/<size>`, `<first>` = the Upload-Offset',
    }),
  ),
});

const BLOB_HEADERS = {
  ETag: HEADERS.blobEtag,
  'Content-Length': HEADERS.contentLength,
  'Accept-Ranges': HEADERS.acceptRanges,
};
const UPLOAD_OFFSET = { 'Upload-Offset': HEADERS.uploadOffset };

/** The media type of a Content-Type header, lower case, without parameters. */
function mediaType(header: string): string {
  return header.split(';')[0]!.trim().toLowerCase();
}

/** Error answers of a status that carry the Upload-Offset header. */
function withUploadOffset(responses: Record<number, ErrorResponse>, status: number) {
  return { ...responses, [status]: { ...responses[status]!, headers: UPLOAD_OFFSET } };
}

/**
 * Blobs by content, for sync (DESIGN §10): editors and admins (a device token acts as its user)
 * ask which blobs the hub lacks, upload them resumably as raw bodies, and download the blobs of
 * records they pulled. HTTP in and out only; see services/blob-service.ts.
 */
export default async function blobRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSession);
  // Role before anything else, the body included (403 before 400).
  app.addHook('onRequest', app.requireRole('editor', 'admin'));
  acceptRawBodies(app, ['application/octet-stream']);
  const service = app.blobService;
  const common = { tags: ['sync'], security: [{ session: [] }] };
  const forbidden = errors('FORBIDDEN');

  app.post<{ Body: { sha256: string[] } }>(
    '/api/v1/blobs/missing',
    {
      config: { deviceToken: true },
      schema: {
        ...common,
        operationId: 'findMissingBlobs',
        summary: 'Which of these blobs the server lacks',
        description:
          'At most 1000 SHA-256s. Those the server has are kept for an hour even if no record ' +
          'refers to them yet, so the change that will refer to them finds them.',
        body: MissingBlobsBodySchema,
        response: { 200: json(MissingBlobsSchema, 'The missing ones'), ...forbidden },
      },
    },
    async (request) => ({ missing: await service.missing(request.body.sha256) }),
  );

  app.head<{ Params: Params }>(
    '/api/v1/blobs/:sha256',
    {
      config: { deviceToken: true },
      schema: {
        ...common,
        operationId: 'getBlobState',
        summary: 'Whether the server has a blob, or how much of an upload of it it kept',
        params: Sha256ParamsSchema,
        response: {
          200: empty('Stored; Content-Length is its size', {
            'Content-Length': HEADERS.contentLength,
          }),
          ...forbidden,
          ...withUploadOffset(errors('BLOB_NOT_FOUND'), 404),
        },
      },
    },
    async (request, reply) => {
      const state = await service.state(request.params.sha256);
      if (!state.stored) {
        throw new ApiError('BLOB_NOT_FOUND', undefined, [], {
          'upload-offset': String(state.offset),
        });
      }
      return reply.header('content-length', state.size).send();
    },
  );

  app.put<{ Params: Params }>(
    '/api/v1/blobs/:sha256',
    {
      config: { deviceToken: true },
      // Before the body is parsed: the global answer to a type no parser takes speaks of JSON
      // and multipart, which are wrong here.
      onRequest: async (request) => {
        const type = request.headers['content-type'];
        if (type !== undefined && mediaType(type) !== 'application/octet-stream') {
          throw new ApiError(
            'UNSUPPORTED_MEDIA_TYPE',
            `A blob is sent as its raw bytes with Content-Type: application/octet-stream, not ${mediaType(type) || 'an empty type'}.`,
          );
        }
      },
      validatorCompiler: rawBodiesUnvalidated(app, []),
      schema: {
        ...common,
        operationId: 'uploadBlob',
        summary: 'Upload a blob, or continue a partial upload of it',
        description:
          'The raw bytes (`Content-Type: application/octet-stream`). Whole: `Content-Length`. ' +
          'Continue: `Content-Range: bytes N-M/T` with N = the Upload-Offset HEAD answers (another ' +
          'N: 409 with Upload-Offset). A cut connection keeps what arrived. Once complete, the ' +
          'SHA-256 is verified (mismatch: 400, the partial is dropped) and the blob stored: 201, ' +
          'or 200 when it was there already. A piece that ends before T: 202 with Upload-Offset. ' +
          'Uploads wait (partial, or whole and unused) until a change uses them, within a quota: ' +
          "beyond the caller's bytes or unfinished uploads 413 UPLOAD_QUOTA_EXCEEDED, beyond " +
          "everyone's bytes 507 UPLOAD_SPACE_FULL (docs/deploy.md).",
        consumes: ['application/octet-stream'],
        params: Sha256ParamsSchema,
        headers: BlobUploadHeadersSchema,
        body: { content: { 'application/octet-stream': { schema: RAW_BLOB_DOC } } },
        response: {
          200: json(BlobUploadSchema, 'The server had the blob already'),
          201: json(BlobUploadSchema, 'Verified and stored'),
          202: json(BlobUploadSchema, 'Kept as a partial upload; continue at Upload-Offset', {
            ...UPLOAD_OFFSET,
          }),
          ...errors('BLOB_HASH_MISMATCH', 'UPLOAD_QUOTA_EXCEEDED', 'UPLOAD_SPACE_FULL'),
          ...forbidden,
          ...withUploadOffset(errors('UPLOAD_OFFSET_MISMATCH'), 409),
        },
      },
    },
    async (request, reply) => {
      const { sha256 } = request.params;
      const piece = pieceOf(request, app.config.limits.fileBytes);
      const body = rawBodyOf(request) ?? Readable.from([]);
      const uploader = caller(request).user.username;
      const result = await readRawBody(body, (stream) =>
        service.upload(sha256, stream, piece, uploader),
      );
      if (result.status === 'partial') {
        return reply
          .status(202)
          .header('upload-offset', result.offset)
          .send({ sha256, size: result.size, offset: result.offset });
      }
      return reply
        .status(result.status === 'created' ? 201 : 200)
        .send({ sha256, size: result.size });
    },
  );

  app.get<{ Params: Params }>(
    '/api/v1/blobs/:sha256',
    {
      config: { deviceToken: true },
      exposeHeadRoute: false,
      schema: {
        ...common,
        operationId: 'downloadBlob',
        summary: "A blob's bytes",
        description:
          'Only blobs some kept record (live, trashed or a kept revision) refers to; others: 404. ' +
          'ETag = "<sha256>", If-None-Match (304), one byte Range (206, 416).',
        params: Sha256ParamsSchema,
        headers: FileDownloadHeadersSchema,
        response: {
          200: binary('application/octet-stream', 'The whole blob', BLOB_HEADERS),
          206: binary('application/octet-stream', 'The byte range asked for', {
            ...BLOB_HEADERS,
            'Content-Range': HEADERS.contentRange,
          }),
          304: empty('The ETag sent in If-None-Match is current', { ETag: HEADERS.blobEtag }),
          ...forbidden,
          ...errors('BLOB_NOT_FOUND', 'RANGE_NOT_SATISFIABLE'),
        },
      },
    },
    async (request, reply) => {
      const { sha256 } = request.params;
      const etag = `"${sha256}"`;
      const { size, release } = await service.readable(sha256);
      reply.raw.once('close', release);
      void reply
        .header('etag', etag)
        .header('accept-ranges', 'bytes')
        .header('cache-control', 'private, no-cache')
        .header('x-content-type-options', 'nosniff')
        .type('application/octet-stream');
      if (etagMatches(request.headers['if-none-match'], etag)) return reply.status(304).send();
      const ifRange = request.headers['if-range'];
      const range =
        ifRange === undefined || etagMatches(String(ifRange), etag)
          ? parseRange(request.headers.range, size)
          : ({ kind: 'full' } as const);
      if (range.kind === 'unsatisfiable') {
        throw new ApiError(
          'RANGE_NOT_SATISFIABLE',
          `The blob has ${size} bytes; the range "${request.headers.range}" lies outside it.`,
          [],
          { 'content-range': `bytes */${size}` },
        );
      }
      if (range.kind === 'partial') {
        return reply
          .status(206)
          .header('content-range', `bytes ${range.start}-${range.end}/${size}`)
          .header('content-length', range.end - range.start + 1)
          .send(app.blobStore.readStream(sha256, range));
      }
      return reply.header('content-length', size).send(app.blobStore.readStream(sha256));
    },
  );
}

const CONTENT_RANGE = /^bytes (\d{1,15})-(\d{1,15})\/(\d{1,15})$/;

/** What the PUT's headers say its body is: the whole blob, or one piece of it. */
function pieceOf(request: FastifyRequest, maxBytes: number): Piece {
  const length = declaredLength(request, maxBytes);
  const header = request.headers['content-range'];
  if (header === undefined) return { kind: 'whole', total: length };
  const match = CONTENT_RANGE.exec(header);
  const start = Number(match?.[1]);
  const end = Number(match?.[2]);
  const total = Number(match?.[3]);
  if (!match || end < start || end >= total) {
    throw new ApiError(
      'VALIDATION_FAILED',
      `Content-Range must be "bytes <first>-<last>/<size>" with first ≤ last < size; got "${header}".`,
      [{ field: 'headers.content-range', message: 'must be bytes <first>-<last>/<size>' }],
    );
  }
  if (length !== undefined && length !== end - start + 1) {
    throw new ApiError(
      'VALIDATION_FAILED',
      `Content-Range names ${end - start + 1} bytes but Content-Length is ${length}.`,
      [{ field: 'headers.content-range', message: 'must name as many bytes as the body has' }],
    );
  }
  return { kind: 'range', start, end, total };
}
