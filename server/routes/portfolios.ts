import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import {
  COVER_SUBFIELDS,
  CreatePortfolioBodySchema,
  DetailQuerySchema,
  errorResponses,
  IfMatchHeadersSchema,
  PortfolioCreatedSchema,
  PortfolioDetailSchema,
  PortfolioIdParamsSchema,
  PortfolioUpdatedSchema,
  SelectedCoverSchema,
  UpdatePortfolioBodySchema,
} from '../../shared';
import { fileDataReader, parseFields, selectFields, selects } from '../domain/list-query';
import { createdView, detailViewWithData, updatedView } from '../domain/portfolio-view';
import { caller } from '../plugins/auth';
import {
  authorizeBeforeBody,
  bodyValidatedByService,
  conditionOf,
  withRevision,
} from './route-support';

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
);
const errors = errorResponses(400, 401, 403, 404, 409);

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
        summary: 'Create a portfolio',
        description:
          'Starts unpublished and active at revision 1. A client may send its own portfolioId; a taken id (live or in the trash) gives 409.',
        body: CreatePortfolioBodySchema,
        response: { 201: PortfolioCreatedSchema, ...errors },
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
        summary: 'Update a portfolio',
        description:
          'Omitted optional fields keep their value; "", [] or null clear them. `revision` in the body or ' +
          'If-Match makes the update conditional (409 when stale). certificateByOrg, certificateDesc, ' +
          'staffPick and any command but "save" need the admin role.',
        params: PortfolioIdParamsSchema,
        headers: IfMatchHeadersSchema,
        body: UpdatePortfolioBodySchema,
        response: { 200: PortfolioUpdatedSchema, ...errors },
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
        summary: 'Move a portfolio to the trash',
        description:
          'Admins, and editors allowed on its category. `If-Match: "<revision>"` makes it ' +
          'conditional (409 when stale). The portfolio then answers 404 in list and detail until ' +
          'it is restored from the trash (POST /api/v1/trash/{portfolioId}/restore).',
        params: PortfolioIdParamsSchema,
        headers: IfMatchHeadersSchema,
        response: { 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      await service.delete(caller(request).user, request.params.portfolioId, conditionOf(request));
      return reply.status(204).send();
    },
  );

  const readData = fileDataReader(app);
  app.get<{ Params: Params; Querystring: DetailQuery }>(
    '/api/v1/portfolio/:portfolioId',
    {
      schema: {
        ...common,
        summary: 'One portfolio with its files',
        description:
          'Viewers get 404 for portfolios that are unpublished or inactive. `field` selects keys ' +
          '(any top-level key, `cover.*` sub-fields; `cover.data` adds the base64 bytes).',
        params: PortfolioIdParamsSchema,
        querystring: DetailQuerySchema,
        response: { 200: SelectedDetailSchema, ...errors },
      },
    },
    async (request, reply) => {
      const record = await service.get(caller(request).user, request.params.portfolioId);
      const fields = parseFields(request.query.field, DETAIL_FIELDS);
      // The lists' `data` is read here; the cover's, when `field` is given, by selectFields.
      const view = await detailViewWithData(record, app.blobStore, {
        cover: !fields,
        draftingProcess: !fields || selects(fields, 'draftingProcess'),
        additionalDocument: !fields || selects(fields, 'additionalDocument'),
      });
      const body = fields ? await selectFields(view, fields, record.cover, readData) : view;
      return withRevision(reply, record).send(body);
    },
  );
}
