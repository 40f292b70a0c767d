import type { FastifyInstance } from 'fastify';
import { IngestBodySchema, IngestResultSchema } from '../../shared';
import { errors, HEADERS, json } from '../openapi/responses';
import { caller } from '../plugins/auth';
import { bodyValidatedByService, withRevision } from './route-support';

/**
 * Folder ingest (DESIGN §16): a portfolio found by member barcode and title, or made, and files
 * attached by the sha256 of blobs sent before (routes/blobs.ts), so no byte is sent twice.
 * HTTP in and out only; see PortfolioService.ingest.
 */
export default async function ingestRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSession);
  const service = app.portfolioService;

  app.post<{ Body: unknown }>(
    '/api/v1/portfolio/ingest',
    {
      // A device token may ingest, as it may push a portfolio with its files through sync.
      config: { deviceToken: true },
      onRequest: app.requireRole('editor', 'admin'),
      validatorCompiler: bodyValidatedByService(app),
      schema: {
        tags: ['files'],
        security: [{ session: [] }],
        operationId: 'ingestPortfolio',
        summary: 'Find or make a portfolio and attach stored blobs to it',
        description:
          "Finds the caller's live portfolio with the same memberBarcode and projectTitle, or " +
          'creates it from `portfolio` (201), and attaches the files it does not hold yet (the ' +
          'same bytes in the same place count as held), all in one revision. Each file names a ' +
          'blob sent before (`POST /api/v1/blobs/missing`, `PUT /api/v1/blobs/{sha256}`): the ' +
          'server reads its type, size, checksum and pixel size from the bytes. Sent again, it ' +
          'changes nothing (200, `added` 0). A blob not sent: 404 BLOB_NOT_FOUND; a kind the ' +
          'place refuses: 415; a list beyond its limit: 413; nothing is changed then.',
        body: IngestBodySchema,
        response: {
          200: json(IngestResultSchema, 'Found; the files it lacked are attached', {
            ETag: HEADERS.revisionEtag,
          }),
          201: json(IngestResultSchema, 'Made, holding the files', {
            ETag: HEADERS.revisionEtag,
          }),
          ...errors(
            'FORBIDDEN',
            'CATEGORY_NOT_ALLOWED',
            'BLOB_NOT_FOUND',
            'TOO_MANY_FILES',
            'IMAGE_TOO_LARGE',
            'UNSUPPORTED_FILE_TYPE',
          ),
        },
      },
    },
    async (request, reply) => {
      const { record, result } = await service.ingest(caller(request).user, request.body);
      return withRevision(reply.status(result.created ? 201 : 200), record).send(result);
    },
  );
}
