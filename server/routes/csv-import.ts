import { randomBytes } from 'node:crypto';
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { CsvImportQuerySchema, CsvImportReportSchema, type CsvImportQuery } from '../../shared';
import {
  acceptRawBodies,
  declaredLength,
  rawBodiesUnvalidated,
  rawBodyOf,
  readRawBody,
  saveBounded,
} from '../http/raw-body';
import { tooLarge } from '../media/receive-file';
import { errors, json } from '../openapi/responses';
import { caller } from '../plugins/auth';
import type { CsvImportRequest } from '../services/csv-import-service';

const RAW_CSV_DOC = {
  $id: 'ImportCsv',
  type: 'string',
  format: 'binary',
  description: 'A CSV: UTF-8, a header row naming the columns, one row per portfolio',
};

declare module 'fastify' {
  interface FastifyRequest {
    csvImport?: CsvImportRequest;
  }
}

/** CSV import (DESIGN §16): HTTP in and out only; see services/csv-import-service.ts. */
export default async function csvImportRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSession);
  acceptRawBodies(app, ['text/csv', 'application/octet-stream']);
  const service = app.csvImportService;
  const maxBytes = app.config.limits.importBytes;

  app.post<{ Querystring: CsvImportQuery }>(
    '/api/v1/import/csv',
    {
      bodyLimit: maxBytes,
      // Authorization before the query and the body (DESIGN §13): a viewer's CSV is never read.
      onRequest: async (request) => service.authorize(caller(request).user, { dryRun: true }),
      // The mapping is checked (an admin-only field needs an admin: 403) before the body is read.
      preHandler: async (request) => {
        request.csvImport = service.authorize(caller(request).user, request.query);
      },
      validatorCompiler: rawBodiesUnvalidated(app, []),
      schema: {
        tags: ['transfer'],
        security: [{ session: [] }],
        operationId: 'importCsv',
        summary: 'Import portfolios from a CSV (spreadsheet rows)',
        description:
          'The CSV as the raw body (`Content-Type: text/csv`): UTF-8 (a BOM is dropped), `,` or `;` ' +
          '(or tab) between cells as the header row shows, quoted cells may hold separators, quotes ' +
          'and line breaks; list cells (tags…) separate entries with `;`. Editors and admins. Each ' +
          'row creates a portfolio, or updates the one its key (`portfolioId`, or `memberBarcode` ' +
          'and `projectTitle`) names, through the same validation and rights as POST and PUT, each ' +
          'write its own revision; a row that would change nothing is `unchanged`, so the same ' +
          'file twice creates nothing twice. `dryRun=true` answers the same report and changes ' +
          'nothing. A file that is not a readable CSV is refused whole before any row is written.',
        querystring: CsvImportQuerySchema,
        consumes: ['text/csv', 'application/octet-stream'],
        body: {
          content: {
            'text/csv': { schema: RAW_CSV_DOC },
            'application/octet-stream': { schema: RAW_CSV_DOC },
          },
        },
        response: {
          200: json(CsvImportReportSchema, 'What each row did (or would do) and the counts'),
          ...errors(
            'INVALID_CSV',
            'INVALID_QUERY',
            'FORBIDDEN',
            'FORBIDDEN_FIELD',
            'CSV_ROW_TOO_LARGE',
            'PAYLOAD_TOO_LARGE',
          ),
        },
      },
    },
    async (request) => {
      const { user } = caller(request);
      declaredLength(request, maxBytes);
      const path = join(app.blobStore.tempDir, `import-${randomBytes(8).toString('hex')}.csv`);
      try {
        await readRawBody(rawBodyOf(request) ?? Readable.from([]), (stream) =>
          saveBounded(stream, path, maxBytes, () => tooLarge(maxBytes)),
        );
        return await service.run(user, path, request.csvImport!);
      } finally {
        await unlink(path).catch(() => {});
      }
    },
  );
}
