import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import {
  COVER_SUBFIELDS,
  CreatePortfolioBodySchema,
  DetailQuerySchema,
  PortfolioCreatedSchema,
  PortfolioDetailSchema,
  PortfolioIdParamsSchema,
  PortfolioUpdatedSchema,
  SelectedCoverSchema,
  UpdatePortfolioBodySchema,
  type CreatePortfolioBody,
  type UpdatePortfolioBody,
} from '../../shared';
import {
  assertMayUpdate,
  expectedRevision,
  isVisibleTo,
  newPortfolio,
  updatedPortfolio,
} from '../domain/portfolio-rules';
import { fileDataReader, parseFields, selectFields, selects } from '../domain/list-query';
import { createdView, detailViewWithData, updatedView } from '../domain/portfolio-view';
import { ApiError } from '../errors';
import { errors, HEADERS, IfMatchHeadersSchema, json } from '../openapi/responses';
import { caller } from '../plugins/auth';

type Params = { portfolioId: string };
type DetailQuery = Static<typeof DetailQuerySchema>;

/** Keys the detail's `field` accepts: every top-level key, and the cover's sub-fields. */
const DETAIL_FIELDS = [
  ...Object.keys(PortfolioDetailSchema.properties),
  ...COVER_SUBFIELDS.map((sub) => `cover.${sub}`),
  'cover.dimention',
];
/** The detail as field selection may leave it: any key can be missing. */
const SelectedDetailSchema = Type.Partial(
  Type.Object({ ...PortfolioDetailSchema.properties, cover: SelectedCoverSchema }),
  { $id: 'PortfolioDetailSelection' },
);
/** Without `field` the whole detail; with it, the keys it selects. */
const DetailAnswerSchema = Type.Union([PortfolioDetailSchema, SelectedDetailSchema]);
const etag = { ETag: HEADERS.revisionEtag };

export default async function portfolioRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSession);
  const common = { tags: ['portfolios'], security: [{ session: [] }] };

  app.post<{ Body: CreatePortfolioBody }>(
    '/api/v1/portfolio',
    {
      preHandler: app.requireRole('editor', 'admin'),
      schema: {
        ...common,
        operationId: 'createPortfolio',
        summary: 'Create a portfolio',
        description:
          'Starts unpublished and active at revision 1. A client may send its own portfolioId; a taken id gives 409.',
        body: CreatePortfolioBodySchema,
        response: {
          201: json(PortfolioCreatedSchema, 'Created, at revision 1', etag),
          ...errors('FORBIDDEN', 'ID_TAKEN'),
        },
      },
    },
    async (request, reply) => {
      const record = newPortfolio(request.body, Date.now());
      await app.portfolioRepository.insert(record);
      return reply.status(201).header('etag', `"${record.revision}"`).send(createdView(record));
    },
  );

  app.put<{ Params: Params; Body: UpdatePortfolioBody }>(
    '/api/v1/portfolio/:portfolioId',
    {
      preHandler: app.requireRole('editor', 'admin'),
      schema: {
        ...common,
        operationId: 'updatePortfolio',
        summary: 'Update a portfolio',
        description:
          'Omitted optional fields keep their value; "", [] or null clear them. `revision` in the body or ' +
          'If-Match makes the update conditional (409 when stale). certificateByOrg, certificateDesc, ' +
          'staffPick and any command but "save" need the admin role.',
        params: PortfolioIdParamsSchema,
        headers: IfMatchHeadersSchema,
        body: UpdatePortfolioBodySchema,
        response: {
          200: json(PortfolioUpdatedSchema, 'Updated, at the next revision', etag),
          ...errors(
            'FORBIDDEN',
            'FORBIDDEN_FIELD',
            'CATEGORY_NOT_ALLOWED',
            'PORTFOLIO_NOT_FOUND',
            'REVISION_CONFLICT',
          ),
        },
      },
    },
    async (request, reply) => {
      const { user } = caller(request);
      const current = app.portfolioRepository.get(request.params.portfolioId);
      if (!current)
        throw new ApiError('PORTFOLIO_NOT_FOUND', `No portfolio "${request.params.portfolioId}".`);
      assertMayUpdate(user, current, request.body);
      const expected = expectedRevision(request.body, request.headers['if-match']);
      if (expected !== undefined && expected !== current.revision) {
        throw new ApiError(
          'REVISION_CONFLICT',
          `The portfolio is at revision ${current.revision}, not ${expected}; reload it and try again.`,
          [{ field: 'body.revision', message: `current revision is ${current.revision}` }],
        );
      }
      const next = updatedPortfolio(current, request.body, Date.now());
      await app.portfolioRepository.replace(next);
      return reply.header('etag', `"${next.revision}"`).send(updatedView(next));
    },
  );

  const readData = fileDataReader(app);
  app.get<{ Params: Params; Querystring: DetailQuery }>(
    '/api/v1/portfolio/:portfolioId',
    {
      schema: {
        ...common,
        operationId: 'getPortfolio',
        summary: 'One portfolio with its files',
        description:
          'Viewers get 404 for portfolios that are unpublished or inactive. `field` selects keys ' +
          '(any top-level key, `cover.*` sub-fields; `cover.data` adds the base64 bytes).',
        params: PortfolioIdParamsSchema,
        querystring: DetailQuerySchema,
        response: {
          200: json(
            DetailAnswerSchema,
            'The portfolio; with `field`, only the keys selected',
            etag,
          ),
          ...errors('INVALID_QUERY', 'PORTFOLIO_NOT_FOUND'),
        },
      },
    },
    async (request, reply) => {
      const record = app.portfolioRepository.get(request.params.portfolioId);
      if (!record || !isVisibleTo(caller(request).user, record)) {
        throw new ApiError('PORTFOLIO_NOT_FOUND', `No portfolio "${request.params.portfolioId}".`);
      }
      const fields = parseFields(request.query.field, DETAIL_FIELDS);
      // The lists' `data` is read here; the cover's, when `field` is given, by selectFields.
      const view = await detailViewWithData(record, app.blobStore, {
        cover: !fields,
        draftingProcess: !fields || selects(fields, 'draftingProcess'),
        additionalDocument: !fields || selects(fields, 'additionalDocument'),
      });
      const body = fields ? await selectFields(view, fields, record.cover, readData) : view;
      return reply.header('etag', `"${record.revision}"`).send(body);
    },
  );
}
