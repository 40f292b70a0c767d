import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { randomBytes } from 'node:crypto';
import { ExportQuerySchema, ImportReportSchema, type ExportQuery } from '../../shared';
import { ApiError } from '../errors';
import {
  acceptRawBodies,
  declaredLength,
  rawBodiesUnvalidated,
  rawBodyOf,
  readRawBody,
  saveBounded,
} from '../http/raw-body';
import { contentDisposition } from '../media/file-names';
import { errors, HEADERS, json } from '../openapi/responses';
import { caller } from '../plugins/auth';

const RAW_ZIP_DOC = {
  $id: 'ImportZip',
  type: 'string',
  format: 'binary',
  description: 'An export ZIP, as GET /api/v1/export?format=zip makes it',
};

const EXPORT_TYPES = {
  zip: 'application/zip',
  csv: 'text/csv; charset=utf-8',
  pdf: 'application/pdf',
} as const;
const DOWNLOAD_HEADERS = { 'Content-Disposition': HEADERS.contentDisposition };

/**
 * Export and import (DESIGN §11): HTTP in and out only; see services/transfer-service.ts.
 */
export default async function transferRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSession);
  acceptRawBodies(app, '*');
  const service = app.transferService;
  const common = { tags: ['transfer'], security: [{ session: [] }] };

  app.get<{ Querystring: ExportQuery }>(
    '/api/v1/export',
    {
      schema: {
        ...common,
        operationId: 'exportPortfolios',
        summary: 'Export portfolios as a ZIP (with history and files) or a CSV',
        description:
          'What the caller may list, with the list’s `filter`, `q` and `orderBy`, and only the ' +
          'portfolios `ids` names when given. ZIP: `manifest.json`, `portfolios/<id>.json` (the ' +
          'detail shape without `data`, each file with its `sha256`, plus `revisions`: every ' +
          'kept revision, oldest first; none for viewers) and `files/<sha256>`. CSV: UTF-8 with a ' +
          'BOM, a header row, arrays joined with `; `, a cell starting with = + - @ prefixed ' +
          "with '. PDF: a printable catalogue, a cover page then each portfolio's public fields " +
          'and images (one or two pages each). Streamed: memory does not grow with the export.',
        querystring: ExportQuerySchema,
        response: {
          200: {
            description: 'The ZIP, the CSV or the PDF, as an attachment',
            headers: DOWNLOAD_HEADERS,
            content: {
              'application/zip': { schema: { type: 'string', format: 'binary' } },
              'text/csv': { schema: { type: 'string', format: 'binary' } },
              'application/pdf': { schema: { type: 'string', format: 'binary' } },
            },
          },
          ...errors('INVALID_QUERY'),
        },
      },
    },
    async (request, reply) => {
      const { user } = caller(request);
      const { format, stream } = service.export(user, request.query);
      const day = new Date().toISOString().slice(0, 10);
      const name = `portfolios-${day}.${format}`;
      stream.on('error', (error) => request.log.error({ err: error }, 'export failed midway'));
      return reply
        .type(EXPORT_TYPES[format])
        .header('content-disposition', contentDisposition('attachment', name))
        .header('cache-control', 'no-store')
        .send(stream);
    },
  );

  const maxBytes = app.config.limits.importBytes;
  app.post(
    '/api/v1/import',
    {
      bodyLimit: maxBytes,
      // Authorization before the body (DESIGN §13): a viewer's ZIP is never read.
      onRequest: async (request) => service.authorizeImport(caller(request).user),
      validatorCompiler: rawBodiesUnvalidated(app, []),
      schema: {
        ...common,
        operationId: 'importPortfolios',
        summary: 'Import an export ZIP',
        description:
          'The ZIP as the raw body (`Content-Type: application/zip` or ' +
          '`application/octet-stream`); editors and admins, each portfolio judged by the ' +
          'caller’s rights. The whole ZIP is checked first (complete, no names outside it, ' +
          'sizes, every file’s sha256, the manifest’s format, each JSON’s shape): anything wrong ' +
          'refuses it whole and nothing is written. Then each portfolio this library lacks is ' +
          'created with its ids and history; one it has with the same content is left alone; ' +
          'one with other content is merged as a sync mutation (different fields merged, the ' +
          'same field a conflict); never duplicated. The same ZIP twice changes nothing.',
        consumes: ['application/zip', 'application/octet-stream'],
        body: {
          content: {
            'application/zip': { schema: RAW_ZIP_DOC },
            'application/octet-stream': { schema: RAW_ZIP_DOC },
          },
        },
        response: {
          200: json(ImportReportSchema, 'What became of each portfolio'),
          ...errors(
            'INVALID_ARCHIVE',
            'ARCHIVE_HASH_MISMATCH',
            'ARCHIVE_FORMAT_TOO_NEW',
            'FORBIDDEN',
            'ARCHIVE_TOO_LARGE',
          ),
        },
      },
    },
    async (request) => {
      const { user } = caller(request);
      declaredLength(request, maxBytes);
      const path = join(app.blobStore.tempDir, `import-${randomBytes(8).toString('hex')}.zip`);
      try {
        await readRawBody(rawBodyOf(request) ?? Readable.from([]), (stream) =>
          saveBounded(stream, path, maxBytes, () => zipTooLarge(maxBytes)),
        );
        return await service.import(user, path);
      } finally {
        await unlink(path).catch(() => {});
      }
    },
  );
}

function zipTooLarge(maxBytes: number): ApiError {
  return new ApiError(
    'ARCHIVE_TOO_LARGE',
    `The ZIP is larger than ${Math.floor(maxBytes / 1_000_000)} MB, the most an import takes.`,
  );
}
