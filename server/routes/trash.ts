import type { FastifyInstance } from 'fastify';
import {
  ConditionalBodySchema,
  IfMatchHeadersSchema,
  PageQuerySchema,
  PortfolioDetailSchema,
  PortfolioIdParamsSchema,
  TrashListSchema,
  type PageQuery,
} from '../../shared';
import { detailView } from '../domain/portfolio-view';
import { trashPurgeTime } from '../domain/retention';
import { empty, errors, HEADERS, json } from '../openapi/responses';
import { caller } from '../plugins/auth';
import {
  authorizeBeforeBody,
  bodyValidatedByService,
  conditionOf,
  withRevision,
} from './route-support';

type Params = { portfolioId: string };

/** Deleted portfolios: list, restore, and (admins) purge for good (DESIGN §9). */
export default async function trashRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSession);
  const service = app.portfolioService;
  const common = { tags: ['trash'], security: [{ session: [] }] };

  app.get<{ Querystring: PageQuery }>(
    '/api/v1/trash',
    {
      onRequest: app.requireRole('editor', 'admin'),
      schema: {
        ...common,
        operationId: 'listTrash',
        summary: 'Portfolios in the trash, most recently deleted first',
        description: `Editors and admins. Each is purged ${app.config.trash.keepDays} days after its deletion.`,
        querystring: PageQuerySchema,
        response: {
          200: json(TrashListSchema, 'One page of the trash'),
          ...errors('FORBIDDEN', 'INVALID_PAGE_TOKEN'),
        },
      },
    },
    async (request) => {
      const page = await service.trash(caller(request).user, {
        pageSize: request.query.pageSize ?? 100,
        pageToken: request.query.pageToken,
      });
      return {
        lists: page.items.map((entry) => ({
          portfolioId: entry.portfolioId,
          projectTitle: entry.projectTitle,
          category: entry.category,
          deletedTime: entry.deletedTime,
          deletedBy: entry.deletedBy,
          revision: entry.revision,
          purgeTime: trashPurgeTime(entry.deletedTime, app.config.trash.keepDays),
        })),
        total: page.total,
        nextPageToken: page.next ?? '',
      };
    },
  );

  app.post<{ Params: Params; Body: unknown }>(
    '/api/v1/trash/:portfolioId/restore',
    {
      onRequest: authorizeBeforeBody<Params>((user, params) =>
        service.authorizeUndelete(user, params.portfolioId),
      ),
      validatorCompiler: bodyValidatedByService(app),
      schema: {
        ...common,
        operationId: 'restoreFromTrash',
        summary: 'Restore a portfolio from the trash',
        description:
          'Admins, and editors allowed on its category. It comes back as it was deleted, files ' +
          'included, at a new revision. `{"revision": n}` or If-Match (the revision it had when ' +
          'deleted) makes it conditional. Answers the detail shape without `data`.',
        params: PortfolioIdParamsSchema,
        headers: IfMatchHeadersSchema,
        body: ConditionalBodySchema,
        response: {
          200: json(PortfolioDetailSchema, 'Restored, at a new revision, without file data', {
            ETag: HEADERS.revisionEtag,
          }),
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
      const record = await service.restoreFromTrash(
        caller(request).user,
        request.params.portfolioId,
        request.body,
        conditionOf(request),
      );
      return withRevision(reply, record).send(detailView(record));
    },
  );

  app.delete<{ Params: Params }>(
    '/api/v1/trash/:portfolioId',
    {
      onRequest: app.requireRole('admin'),
      schema: {
        ...common,
        operationId: 'purgeFromTrash',
        summary: 'Purge one portfolio from the trash now',
        description:
          'Admins only. Removes it and its history for good; the change feed keeps a tombstone. ' +
          'Files no kept record refers to any more are deleted.',
        params: PortfolioIdParamsSchema,
        response: {
          204: empty('Purged for good'),
          ...errors('FORBIDDEN', 'PORTFOLIO_NOT_FOUND'),
        },
      },
    },
    async (request, reply) => {
      await service.purge(caller(request).user, request.params.portfolioId);
      return reply.status(204).send();
    },
  );
}
