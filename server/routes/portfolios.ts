import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import {
  COVER_SUBFIELDS,
  CreatePortfolioBodySchema,
  DetailQuerySchema,
  IfMatchHeadersSchema,
  ListFileSchema,
  PortfolioCreatedSchema,
  PortfolioDetailSchema,
  PortfolioIdParamsSchema,
  PortfolioUpdatedSchema,
  SelectedCoverSchema,
  UpdatePortfolioBodySchema,
} from '../../shared';
import { parseFields, selectFields, selects } from '../domain/list-query';
import { createdView, detailViewWithData, updatedView } from '../domain/portfolio-view';
import { InlineData, sendWithInlineData } from '../http/inline-data-response';
import { empty, errors, HEADERS, json } from '../openapi/responses';
import { caller } from '../plugins/auth';
import {
  authorizeBeforeBody,
  bodyValidatedByService,
  conditionOf,
  withRevision,
} from './route-support';

type Params = { portfolioId: string };
type DetailQuery = Static<typeof DetailQuerySchema>;

/**
 * Keys the detail's `field` accepts: every top-level key, the cover's sub-fields, and the keys of
 * the lists' File objects (so that a client can have the lists without their `data`).
 */
const DETAIL_FIELDS = [
  ...Object.keys(PortfolioDetailSchema.properties),
  ...COVER_SUBFIELDS.map((sub) => `cover.${sub}`),
  'cover.dimention',
  ...['draftingProcess', 'additionalDocument'].flatMap((slot) =>
    Object.keys(ListFileSchema.properties).map((sub) => `${slot}.${sub}`),
  ),
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
  const service = app.portfolioService;
  const validatorCompiler = bodyValidatedByService(app);
  /** Role, visibility and category, checked before a byte of the body is read. */
  const authorizeChange = authorizeBeforeBody<Params>((user, params) =>
    service.authorizeChange(user, params.portfolioId),
  );

  app.post<{ Body: unknown }>(
    '/api/v1/portfolio',
    {
      onRequest: app.requireRole('editor', 'admin'),
      validatorCompiler,
      schema: {
        ...common,
        operationId: 'createPortfolio',
        summary: 'Create a portfolio',
        description:
          'Starts unpublished and active at revision 1. A client may send its own portfolioId; a taken id (live or in the trash) gives 409. ' +
          'An editor creates only in a category of its allowEdit (403 CATEGORY_NOT_ALLOWED, judged before the other fields).',
        body: CreatePortfolioBodySchema,
        response: {
          201: json(PortfolioCreatedSchema, 'Created, at revision 1', etag),
          ...errors('FORBIDDEN', 'CATEGORY_NOT_ALLOWED', 'ID_TAKEN'),
        },
      },
    },
    async (request, reply) => {
      const record = await service.create(caller(request).user, request.body);
      return withRevision(reply.status(201), record).send(createdView(record));
    },
  );

  app.put<{ Params: Params; Body: unknown }>(
    '/api/v1/portfolio/:portfolioId',
    {
      onRequest: authorizeChange,
      validatorCompiler,
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
      const record = await service.update(
        caller(request).user,
        request.params.portfolioId,
        request.body,
        conditionOf(request),
      );
      return withRevision(reply, record).send(updatedView(record));
    },
  );

  app.delete<{ Params: Params }>(
    '/api/v1/portfolio/:portfolioId',
    {
      onRequest: authorizeChange,
      schema: {
        ...common,
        operationId: 'deletePortfolio',
        summary: 'Move a portfolio to the trash',
        description:
          'Admins, and editors allowed on its category. `If-Match: "<revision>"` makes it ' +
          'conditional (409 when stale). The portfolio then answers 404 in list and detail until ' +
          'it is restored from the trash (POST /api/v1/trash/{portfolioId}/restore).',
        params: PortfolioIdParamsSchema,
        headers: IfMatchHeadersSchema,
        response: {
          204: empty('In the trash'),
          ...errors(
            'FORBIDDEN',
            'CATEGORY_NOT_ALLOWED',
            'PORTFOLIO_NOT_FOUND',
            'REVISION_CONFLICT',
          ),
        },
      },
    },
    async (request, reply) => {
      await service.delete(caller(request).user, request.params.portfolioId, conditionOf(request));
      return reply.status(204).send();
    },
  );

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
          ...errors('INVALID_QUERY', 'PORTFOLIO_NOT_FOUND', 'RESPONSE_TOO_LARGE'),
        },
      },
    },
    async (request, reply) => {
      const record = await service.get(caller(request).user, request.params.portfolioId);
      const fields = parseFields(request.query.field, DETAIL_FIELDS);
      // Files' `data` are placeholders here (the lists' added by detailViewWithData, the cover's,
      // when `field` is given, by selectFields), streamed from the blob store when sent.
      const inline = new InlineData();
      const view = detailViewWithData(record, inline.placeholder, {
        cover: !fields,
        draftingProcess: !fields || selects(fields, 'draftingProcess.data'),
        additionalDocument: !fields || selects(fields, 'additionalDocument.data'),
      });
      const body = fields ? selectFields(view, fields, record.cover, inline.placeholder) : view;
      const headers = { etag: `"${record.revision}"` };
      if (inline.isEmpty) return withRevision(reply, record).send(body);
      // Serialized by the route's own schema for a JSON 200 (the schemas are per content type).
      const json = reply.serializeInput(body, '200', 'application/json') as string;
      return sendWithInlineData(reply, json, inline, {
        blobs: app.blobStore,
        limitBytes: app.config.limits.inlineBytes,
        headers,
      });
    },
  );
}
