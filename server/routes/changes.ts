import type { FastifyInstance } from 'fastify';
import {
  ChangesQuerySchema,
  ChangesResponseSchema,
  type ChangeItem,
  type ChangesQuery,
} from '../../shared';
import { detailView } from '../domain/portfolio-view';
import { errors, json } from '../openapi/responses';
import { caller } from '../plugins/auth';
import { filesOf } from '../domain/portfolio-files';
import type { Change } from '../repositories/portfolio-repository-contract';

/** The feed item: a tombstone, or the portfolio's latest state in the detail shape plus seq. */
function feedItem(change: Change): ChangeItem {
  const { seq, portfolioId, revision } = change;
  if (change.deleted) return { seq, portfolioId, revision, deleted: true };
  return {
    seq,
    portfolioId,
    revision,
    deleted: false,
    portfolio: {
      ...detailView(change.portfolio),
      seq: change.portfolio.seq,
      fileHashes: Object.fromEntries(filesOf(change.portfolio).map((f) => [f.fileId, f.sha256])),
      ...(change.portfolio.conflicts?.length && { conflicts: change.portfolio.conflicts }),
    },
  };
}

/** The change feed (DESIGN §9): what changed since a seq, for sync and integrations. */
export default async function changeRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSession);
  const service = app.portfolioService;

  app.get<{ Querystring: ChangesQuery }>(
    '/api/v1/changes',
    {
      config: { deviceToken: true },
      onRequest: app.requireRole('editor', 'admin'),
      schema: {
        operationId: 'listChanges',
        tags: ['history'],
        security: [{ session: [] }],
        summary: 'Changes since a sequence number',
        description:
          'Editors and admins. In `seq` order; several changes of one portfolio collapse to its ' +
          'latest state; one in the trash or purged is a tombstone (`deleted: true`, no ' +
          '`portfolio`). Pass `next` as `since` to go on while `hasMore`. A `since` older than ' +
          'the oldest tombstone kept answers 410 RESYNC_REQUIRED: start again from 0.',
        querystring: ChangesQuerySchema,
        response: {
          200: json(ChangesResponseSchema, 'The changes after `since`, in `seq` order'),
          ...errors('FORBIDDEN', 'RESYNC_REQUIRED'),
        },
      },
    },
    async (request) => {
      const page = await service.changes(
        caller(request).user,
        request.query.since ?? 0,
        request.query.limit ?? 100,
      );
      return {
        changes: page.changes.map(feedItem),
        next: page.next,
        hasMore: page.hasMore,
        libraryId: service.libraryId,
      };
    },
  );
}
