import { createReadStream } from 'node:fs';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { FileParamsSchema, isRasterImage, ThumbnailQuerySchema } from '../../shared';
import { ApiError } from '../errors';
import {
  binary,
  empty,
  errors,
  FileDownloadHeadersSchema,
  HEADERS,
  ThumbnailHeadersSchema,
} from '../openapi/responses';
import { etagMatches, parseRange } from '../media/conditional-get';
import { contentDisposition, downloadName } from '../media/file-names';
import { THUMBNAIL_WIDTHS, type ThumbnailWidth } from '../media/thumbnails';
import { caller } from '../plugins/auth';

type Params = { portfolioId: string; fileId: string };

/** The headers of a file answer with bytes, as the document declares them. */
const FILE_HEADERS = {
  ETag: HEADERS.fileEtag,
  'Content-Disposition': HEADERS.contentDisposition,
  'Content-Length': HEADERS.contentLength,
  'Accept-Ranges': HEADERS.acceptRanges,
};
const THUMBNAIL_ETAG = { ETag: HEADERS.thumbnailEtag };

/** A file's bytes and an image's thumbnails, for anyone who sees the portfolio (DESIGN §5). */
export default async function fileDownloadRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSession);
  const service = app.portfolioService;
  const common = { tags: ['files'], security: [{ session: [] }], params: FileParamsSchema };

  app.get<{ Params: Params }>(
    '/api/v1/portfolio/:portfolioId/files/:fileId',
    {
      schema: {
        ...common,
        operationId: 'downloadFile',
        summary: "A file's bytes",
        description:
          'Content-Type as sniffed, ETag = "<md5>", If-None-Match (304), single byte Range (206, ' +
          '416), Content-Disposition with a safe name. Raster images are inline; everything else ' +
          'is an attachment with Content-Security-Policy: sandbox.',
        headers: FileDownloadHeadersSchema,
        response: {
          200: binary('*/*', 'The whole file, of its sniffed Content-Type', FILE_HEADERS),
          206: binary('*/*', 'The byte range asked for', {
            ...FILE_HEADERS,
            'Content-Range': HEADERS.contentRange,
          }),
          304: empty('The ETag sent in If-None-Match is current', { ETag: HEADERS.fileEtag }),
          ...errors('PORTFOLIO_NOT_FOUND', 'FILE_NOT_FOUND', 'RANGE_NOT_SATISFIABLE'),
        },
      },
    },
    async (request, reply) => {
      const { file } = await service.file(
        caller(request).user,
        request.params.portfolioId,
        request.params.fileId,
      );
      const etag = `"${file.md5Checksum}"`;
      const raster = isRasterImage(file.mimeType);
      const name = downloadName(file.originalFilename, file.fullFileExtension);
      safeHeaders(reply, raster)
        .header('etag', etag)
        .header('accept-ranges', 'bytes')
        .header('content-disposition', contentDisposition(raster ? 'inline' : 'attachment', name))
        .type(
          file.mimeType.startsWith('text/') ? `${file.mimeType}; charset=utf-8` : file.mimeType,
        );
      if (etagMatches(request.headers['if-none-match'], etag)) return reply.status(304).send();

      // The blob's own size, not the record's: an answer never sends more or fewer bytes than
      // its Content-Length says, whatever a record holds.
      const size = await app.blobStore.sizeOf(file.sha256);
      if (size === undefined) throw new Error(`The blob of file ${file.fileId} is missing`);
      const ifRange = request.headers['if-range'];
      const range =
        ifRange === undefined || etagMatches(String(ifRange), etag)
          ? parseRange(request.headers.range, size)
          : ({ kind: 'full' } as const);
      if (range.kind === 'unsatisfiable') {
        throw new ApiError(
          'RANGE_NOT_SATISFIABLE',
          `The file has ${size} bytes; the range "${request.headers.range}" lies outside it.`,
          [],
          { 'content-range': `bytes */${size}` },
        );
      }
      if (range.kind === 'partial') {
        return reply
          .status(206)
          .header('content-range', `bytes ${range.start}-${range.end}/${size}`)
          .header('content-length', range.end - range.start + 1)
          .send(app.blobStore.readStream(file.sha256, range));
      }
      return reply.header('content-length', size).send(app.blobStore.readStream(file.sha256));
    },
  );

  app.get<{ Params: Params; Querystring: { width?: number } }>(
    '/api/v1/portfolio/:portfolioId/files/:fileId/thumbnail',
    {
      schema: {
        ...common,
        operationId: 'getThumbnail',
        summary: 'A WebP thumbnail of an image file',
        description: `width: one of ${THUMBNAIL_WIDTHS.join(', ')} (default 256); never wider than the image. ETag and 304 as for the file; 415 for files that are not images.`,
        querystring: ThumbnailQuerySchema,
        headers: ThumbnailHeadersSchema,
        response: {
          200: binary('image/webp', 'The thumbnail', {
            ...THUMBNAIL_ETAG,
            'Content-Disposition': HEADERS.contentDisposition,
          }),
          304: empty('The ETag sent in If-None-Match is current', THUMBNAIL_ETAG),
          ...errors(
            'INVALID_QUERY',
            'PORTFOLIO_NOT_FOUND',
            'FILE_NOT_FOUND',
            'UNSUPPORTED_FILE_TYPE',
          ),
        },
      },
    },
    async (request, reply) => {
      const width = request.query.width ?? 256;
      if (!(THUMBNAIL_WIDTHS as readonly number[]).includes(width)) {
        const message = `width must be one of ${THUMBNAIL_WIDTHS.join(', ')}.`;
        throw new ApiError('INVALID_QUERY', message, [{ field: 'querystring.width', message }]);
      }
      const { file } = await service.file(
        caller(request).user,
        request.params.portfolioId,
        request.params.fileId,
      );
      if (!isRasterImage(file.mimeType)) {
        throw new ApiError('UNSUPPORTED_FILE_TYPE', 'Only images have thumbnails.');
      }
      const etag = `"${file.md5Checksum}-w${width}"`;
      const name = `${file.originalFilename.replace(/\.[^.]*$/, '')}-${width}.webp`;
      safeHeaders(reply, true)
        .header('etag', etag)
        .header('content-disposition', contentDisposition('inline', name))
        .type('image/webp');
      if (etagMatches(request.headers['if-none-match'], etag)) return reply.status(304).send();
      const path = await app.thumbnails.get(file.sha256, width as ThumbnailWidth);
      return reply.send(createReadStream(path));
    },
  );
}

/** Headers on every file answer: never sniffed by the browser, inline only for raster images. */
function safeHeaders(reply: FastifyReply, raster: boolean): FastifyReply {
  reply.header('x-content-type-options', 'nosniff').header('cache-control', 'private, no-cache');
  if (!raster) reply.header('content-security-policy', 'sandbox');
  return reply;
}
