import type { FastifyInstance } from 'fastify';
import {
  CoverFileSchema,
  errorResponses,
  FileDescriptionBodySchema,
  FileParamsSchema,
  IfMatchHeadersSchema,
  ListFileSchema,
} from '../../shared';
import { fileView } from '../domain/portfolio-view';
import { caller } from '../plugins/auth';
import {
  authorizeBeforeBody,
  bodyValidatedByService,
  conditionOf,
  withRevision,
} from './route-support';

type Params = { portfolioId: string; fileId: string };

const errors = errorResponses(400, 401, 403, 404, 409);
const FileAnswerSchema = { anyOf: [CoverFileSchema, ListFileSchema] };

/** A file's description changed, or the file removed: each an update of its portfolio. */
export default async function fileChangeRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSession);
  const service = app.portfolioService;
  const common = {
    tags: ['files'],
    security: [{ session: [] }],
    params: FileParamsSchema,
    headers: IfMatchHeadersSchema,
  };
  /** Role, visibility and category, checked before a byte of the body is read. */
  const authorizeChange = authorizeBeforeBody<Params>((user, params) =>
    service.authorizeChange(user, params.portfolioId),
  );

  app.patch<{ Params: Params; Body: unknown }>(
    '/api/v1/portfolio/:portfolioId/files/:fileId',
    {
      onRequest: authorizeChange,
      validatorCompiler: bodyValidatedByService(app),
      schema: {
        ...common,
        summary: "Change a file's description",
        description: 'Counts as an update of the portfolio. Answers the File object without data.',
        body: FileDescriptionBodySchema,
        response: { 200: FileAnswerSchema, ...errors },
      },
    },
    async (request, reply) => {
      const { record, slot, file } = await service.changeFile(
        caller(request).user,
        request.params.portfolioId,
        request.params.fileId,
        request.body,
        conditionOf(request),
      );
      return withRevision(reply, record).send(fileView(slot, file));
    },
  );

  app.delete<{ Params: Params }>(
    '/api/v1/portfolio/:portfolioId/files/:fileId',
    {
      onRequest: authorizeChange,
      schema: {
        ...common,
        summary: 'Remove a file',
        description:
          'Counts as an update of the portfolio. Answers the removed File object without data; ' +
          'its bytes are deleted once no portfolio, trashed portfolio or kept revision refers to them.',
        response: { 200: FileAnswerSchema, ...errors },
      },
    },
    async (request, reply) => {
      const { record, slot, file } = await service.removeFile(
        caller(request).user,
        request.params.portfolioId,
        request.params.fileId,
        conditionOf(request),
      );
      return withRevision(reply, record).send(fileView(slot, file));
    },
  );
}
