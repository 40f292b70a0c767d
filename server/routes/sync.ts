import type { FastifyInstance } from 'fastify';
import {
  ConflictIdParamsSchema,
  ConflictListSchema,
  IfMatchHeadersSchema,
  MutationsBodySchema,
  MutationsResponseSchema,
  PageQuerySchema,
  PortfolioConflictsSchema,
  PortfolioDetailSchema,
  PortfolioIdParamsSchema,
  ResolveConflictBodySchema,
  type MutationsBody,
  type PageQuery,
} from '../../shared';
import { detailView } from '../domain/portfolio-view';
import { errors, HEADERS, json } from '../openapi/responses';
import { caller } from '../plugins/auth';
import { bodyValidatedByService, conditionOf, withRevision } from './route-support';

/** The hub side of sync (DESIGN §10): replicas' mutations and the conflicts they leave. */
export default async function syncRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSession);
  const service = app.syncService;
  const common = { tags: ['sync'], security: [{ session: [] }] };
  const staff = app.requireRole('editor', 'admin');

  app.post<{ Body: MutationsBody }>(
    '/api/v1/sync/mutations',
    {
      config: { deviceToken: true },
      onRequest: staff,
      schema: {
        ...common,
        operationId: 'applyMutations',
        summary: "Apply a replica's changes, each in its own transaction",
        description:
          'Editors and admins (a device token or a session), with the rights of that user. ' +
          'Applied in order; each answers `applied` (base = current), `merged` (other fields ' +
          'changed on the hub since the base), `conflict` (the same field changed on both ' +
          'sides: the hub keeps its value and stores a conflict; or an edit met a delete) or ' +
          '`rejected` with an error (FORBIDDEN, VALIDATION_FAILED, BLOBS_MISSING, ' +
          'UNKNOWN_BASE_REVISION, PORTFOLIO_NOT_FOUND, ID_TAKEN): nothing of a rejected ' +
          'mutation is applied. A mutation id seen before answers its stored result again. A ' +
          'replica id bound to another device is 409 REPLICA_ID_TAKEN for the whole request.',
        body: MutationsBodySchema,
        response: {
          200: json(MutationsResponseSchema, 'One result per mutation, in order'),
          ...errors('FORBIDDEN', 'REPLICA_ID_TAKEN'),
        },
      },
    },
    async (request) => ({
      results: await service.applyMutations(
        caller(request),
        request.body.replicaId,
        request.body.mutations,
      ),
    }),
  );

  app.get<{ Querystring: PageQuery }>(
    '/api/v1/conflicts',
    {
      config: { deviceToken: true },
      onRequest: staff,
      schema: {
        ...common,
        operationId: 'listConflicts',
        summary: 'Unresolved sync conflicts, newest first',
        description: 'Editors and admins. Each with the title of its portfolio.',
        querystring: PageQuerySchema,
        response: {
          200: json(ConflictListSchema, 'One page of conflicts'),
          ...errors('FORBIDDEN', 'INVALID_PAGE_TOKEN'),
        },
      },
    },
    async (request) =>
      service.listConflicts(caller(request).user, {
        pageSize: request.query.pageSize ?? 100,
        pageToken: request.query.pageToken,
      }),
  );

  app.get<{ Params: { portfolioId: string } }>(
    '/api/v1/portfolio/:portfolioId/conflicts',
    {
      config: { deviceToken: true },
      onRequest: staff,
      schema: {
        ...common,
        operationId: 'listPortfolioConflicts',
        summary: "One portfolio's unresolved sync conflicts",
        params: PortfolioIdParamsSchema,
        response: {
          200: json(PortfolioConflictsSchema, 'Its conflicts, oldest first'),
          ...errors('FORBIDDEN', 'PORTFOLIO_NOT_FOUND'),
        },
      },
    },
    async (request) => ({
      conflicts: await service.portfolioConflicts(caller(request).user, request.params.portfolioId),
    }),
  );

  app.post<{ Params: { conflictId: string } }>(
    '/api/v1/conflicts/:conflictId/resolve',
    {
      onRequest: staff,
      schema: {
        ...common,
        operationId: 'resolveConflict',
        summary: 'Resolve a sync conflict',
        description:
          'Same rules as PUT. `keep` picks the side each conflicting field takes; `fields` ' +
          '(optional) gives edited values over both. An update with command ' +
          '`resolve-conflict` (in history) that removes the conflict. A delete conflict whose ' +
          'chosen side is the deleted one then moves the portfolio to the trash. `revision` ' +
          '(or If-Match) makes it conditional.',
        params: ConflictIdParamsSchema,
        headers: IfMatchHeadersSchema,
        body: ResolveConflictBodySchema,
        response: {
          200: json(PortfolioDetailSchema, 'The portfolio after it (no data)', {
            ETag: HEADERS.revisionEtag,
          }),
          ...errors(
            'FORBIDDEN',
            'CATEGORY_NOT_ALLOWED',
            'FORBIDDEN_FIELD',
            'CONFLICT_NOT_FOUND',
            'PORTFOLIO_NOT_FOUND',
            'REVISION_CONFLICT',
          ),
        },
      },
      validatorCompiler: bodyValidatedByService(app),
    },
    async (request, reply) => {
      const record = await service.resolve(
        caller(request).user,
        request.params.conflictId,
        request.body,
        conditionOf(request),
      );
      return withRevision(reply, record).send(detailView(record));
    },
  );
}
