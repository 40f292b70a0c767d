import { createReadStream } from 'node:fs';
import type { FastifyInstance, FastifyReply } from 'fastify';
import {
  errorResponses,
  FileParamsSchema,
  isRasterImage,
  ThumbnailQuerySchema,
} from '../../shared';
import { ApiError } from '../errors';
import { etagMatches, parseRange } from '../media/conditional-get';
import { contentDisposition, downloadName } from '../media/file-names';
import { THUMBNAIL_WIDTHS, type ThumbnailWidth } from '../media/thumbnails';
import { caller } from '../plugins/auth';

type Params = { portfolioId: string; fileId: string };

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
        summary: "A file's bytes",
        description:
          'Content-Type as sniffed, ETag = "<md5>", If-None-Match (304), single byte Range (206, ' +
          '416), Content-Disposition with a safe name. Raster images are inline; everything else ' +
          'is an attachment with Content-Security-Policy: sandbox.',
        response: errorResponses(400, 401, 404),
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

      const ifRange = request.headers['if-range'];
      const range =
        ifRange === undefined || etagMatches(String(ifRange), etag)
          ? parseRange(request.headers.range, file.size)
          : ({ kind: 'full' } as const);
      if (range.kind === 'unsatisfiable') {
        throw new ApiError(
          'RANGE_NOT_SATISFIABLE',
          `The file has ${file.size} bytes; the range "${request.headers.range}" lies outside it.`,
          [],
          { 'content-range': `bytes */${file.size}` },
        );
      }
      if (range.kind === 'partial') {
        return reply
          .status(206)
          .header('content-range', `bytes ${range.start}-${range.end}/${file.size}`)
          .header('content-length', range.end - range.start + 1)
          .send(app.blobStore.readStream(file.sha256, range));
      }
      return reply.header('content-length', file.size).send(app.blobStore.readStream(file.sha256));
    },
  );

  app.get<{ Params: Params; Querystring: { width?: number } }>(
    '/api/v1/portfolio/:portfolioId/files/:fileId/thumbnail',
    {
      schema: {
        ...common,
        summary: 'A WebP thumbnail of an image file',
        description: `width: one of ${THUMBNAIL_WIDTHS.join(', ')} (default 256); never wider than the image. ETag and 304 as for the file; 415 for files that are not images.`,
        querystring: ThumbnailQuerySchema,
        response: errorResponses(400, 401, 404, 415),
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
