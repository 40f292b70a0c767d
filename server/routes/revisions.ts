import type { FastifyInstance } from 'fastify';
import {
  ConditionalBodySchema,
  errorResponses,
  IfMatchHeadersSchema,
  PageQuerySchema,
  PortfolioDetailSchema,
  PortfolioIdParamsSchema,
  PortfolioUpdatedSchema,
  RevisionListSchema,
  RevisionParamsSchema,
  type PageQuery,
} from '../../shared';
import { detailView, updatedView } from '../domain/portfolio-view';
import { caller } from '../plugins/auth';
import {
  authorizeBeforeBody,
  bodyValidatedByService,
  conditionOf,
  withRevision,
} from './route-support';

type Params = { portfolioId: string };
type RevisionParams = { portfolioId: string; revision: string };

const errors = errorResponses(400, 401, 403, 404);

/** A portfolio's kept revisions, each one as it was, and restoring one (DESIGN §9). */
export default async function revisionRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSession);
  // History is for the people who change portfolios; viewers are refused before anything else.
  app.addHook('onRequest', app.requireRole('editor', 'admin'));
  const service = app.portfolioService;
  const common = { tags: ['history'], security: [{ session: [] }] };

  app.get<{ Params: Params; Querystring: PageQuery }>(
    '/api/v1/portfolio/:portfolioId/revisions',
    {
      schema: {
        ...common,
        summary: "A portfolio's kept revisions, newest first",
        description:
          'Editors and admins. Retention keeps every revision of the last 90 days and always the ' +
          'newest 50 (configurable); the current revision is always kept.',
        params: PortfolioIdParamsSchema,
        querystring: PageQuerySchema,
        response: { 200: RevisionListSchema, ...errors },
      },
    },
    async (request) => {
      const page = await service.revisions(caller(request).user, request.params.portfolioId, {
        pageSize: request.query.pageSize ?? 100,
        pageToken: request.query.pageToken,
      });
      return {
        revisions: page.items.map(
          ({ revision, modifiedTime, modifiedBy, command, changedFields }) => ({
            revision,
            modifiedTime,
            modifiedBy,
            command,
            changedFields,
          }),
        ),
        total: page.total,
        nextPageToken: page.next ?? '',
      };
    },
  );

  app.get<{ Params: RevisionParams }>(
    '/api/v1/portfolio/:portfolioId/revisions/:revision',
    {
      schema: {
        ...common,
        summary: 'A portfolio as it was at one revision',
        description: 'The detail shape without file `data`; 404 REVISION_NOT_FOUND when not kept.',
        params: RevisionParamsSchema,
        response: { 200: PortfolioDetailSchema, ...errors },
      },
    },
    async (request) => {
      const { portfolioId, revision } = request.params;
      const entry = await service.revision(caller(request).user, portfolioId, Number(revision));
      return detailView(entry.snapshot);
    },
  );

  app.post<{ Params: RevisionParams; Body: unknown }>(
    '/api/v1/portfolio/:portfolioId/revisions/:revision/restore',
    {
      validatorCompiler: bodyValidatedByService(app),
      onRequest: authorizeBeforeBody<Params>((user, params) =>
        service.authorizeChange(user, params.portfolioId),
      ),
      schema: {
        ...common,
        summary: 'Restore a revision as a new one',
        description:
          'Same rules as PUT (editor allowed on the category, admin-only fields need an admin). ' +
          'Makes a new revision with the content of that one, files included; never rewinds. ' +
          '`{"revision": n}` in the body or If-Match makes it conditional (409 when stale). ' +
          'Answers like PUT.',
        params: RevisionParamsSchema,
        headers: IfMatchHeadersSchema,
        body: ConditionalBodySchema,
        response: { 200: PortfolioUpdatedSchema, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const { portfolioId, revision } = request.params;
      const record = await service.restoreRevision(
        caller(request).user,
        portfolioId,
        Number(revision),
        request.body,
        conditionOf(request),
      );
      return withRevision(reply, record).send(updatedView(record));
    },
  );
}
