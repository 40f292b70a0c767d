import type { FastifyInstance } from 'fastify';
import {
  BULK_MAX_PORTFOLIOS,
  BulkAnswerSchema,
  BulkEditBodySchema,
  BulkUndoBodySchema,
} from '../../shared';
import { errors, json } from '../openapi/responses';
import { caller } from '../plugins/auth';
import { bodyValidatedByService } from './route-support';

/**
 * A bulk edit's body: up to 1,000 ids with their expected revisions and the fields to set fit
 * well within it; a larger body is refused (413) before a byte of it is parsed.
 */
const BULK_BODY_BYTES = 1024 * 1024;

/** Bulk edit and its undo (DESIGN §16); the bulk service does the work. */
export default async function portfolioBulkRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSession);
  const common = { tags: ['portfolios'], security: [{ session: [] }] };
  const bulk = app.bulkService;
  const options = {
    onRequest: app.requireRole('editor', 'admin'),
    validatorCompiler: bodyValidatedByService(app),
    bodyLimit: BULK_BODY_BYTES,
  };

  app.post<{ Body: unknown }>(
    '/api/v1/portfolio/bulk',
    {
      ...options,
      schema: {
        ...common,
        operationId: 'bulkEditPortfolios',
        summary: 'Change many portfolios in one action',
        description:
          `Selects portfolios by \`ids\` (at most ${BULK_MAX_PORTFOLIOS}) or by \`filter\` and \`q\` as the list does ` +
          `(a selection of more than ${BULK_MAX_PORTFOLIOS}: 413 BULK_TOO_MANY, nothing changed), then changes each ` +
          'through the same rules as its own PUT, as one revision: `set` fields, `addTags`/`removeTags`, a `command` ' +
          '(or `trash`/`restore` alone). Each result says 200 (with the new revision) or why that portfolio was left ' +
          'unchanged (400, 403, 404, 409 with code and message). `undoToken` undoes the whole action.',
        body: BulkEditBodySchema,
        response: {
          200: json(BulkAnswerSchema, 'One result per portfolio, in the order selected'),
          ...errors('FORBIDDEN', 'BULK_TOO_MANY', 'PAYLOAD_TOO_LARGE'),
        },
      },
    },
    async (request) => bulk.edit(caller(request).user, request.body),
  );

  app.post<{ Body: unknown }>(
    '/api/v1/portfolio/bulk/undo',
    {
      ...options,
      schema: {
        ...common,
        operationId: 'undoBulkEdit',
        summary: 'Undo a bulk edit',
        description:
          'Brings each portfolio the action changed back to its revision before it (content and state; a trashed ' +
          'one back from the trash), as a new revision; one changed since is left as it is (409 in its result). ' +
          'A token works once, for its user, for an hour, and not after a restart of the server (404 UNDO_NOT_FOUND). ' +
          'The answer carries a token that undoes the undo.',
        body: BulkUndoBodySchema,
        response: {
          200: json(BulkAnswerSchema, 'One result per portfolio the action changed'),
          ...errors('FORBIDDEN', 'UNDO_NOT_FOUND'),
        },
      },
    },
    async (request) => bulk.undo(caller(request).user, request.body),
  );
}
