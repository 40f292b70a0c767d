import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import {
  CoverChoiceAnswerSchema,
  CoverFileSchema,
  DraftingOrderAnswerSchema,
  FileDescriptionBodySchema,
  FileOrderBodySchema,
  FileParamsSchema,
  FilesDescriptionAnswerSchema,
  FilesDescriptionBodySchema,
  IfMatchHeadersSchema,
  ListFileSchema,
  PortfolioIdParamsSchema,
} from '../../shared';
import { coverFileView, fileView, listFileView } from '../domain/portfolio-view';
import { errors, HEADERS, json } from '../openapi/responses';
import { caller } from '../plugins/auth';
import {
  authorizeBeforeBody,
  bodyValidatedByService,
  conditionOf,
  withRevision,
} from './route-support';

type Params = { portfolioId: string; fileId: string };

/** A file answer names its file in the slot's spelling: `fileId` (cover) or `fileID` (lists). */
const FileAnswerSchema = Type.Union([CoverFileSchema, ListFileSchema]);
const CHANGE_ERRORS = [
  'FORBIDDEN',
  'CATEGORY_NOT_ALLOWED',
  'PORTFOLIO_NOT_FOUND',
  'FILE_NOT_FOUND',
  'REVISION_CONFLICT',
] as const;
const etag = { ETag: HEADERS.revisionEtag };

/**
 * A file's description changed, the file removed, the drafting images reordered, one of them
 * made the cover, several files described at once: each an update of its portfolio.
 */
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
        operationId: 'updateFileDescription',
        summary: "Change a file's description",
        description: 'Counts as an update of the portfolio. Answers the File object without data.',
        body: FileDescriptionBodySchema,
        response: {
          200: json(FileAnswerSchema, 'Changed: the File object without data', etag),
          ...errors(...CHANGE_ERRORS),
        },
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
        operationId: 'deleteFile',
        summary: 'Remove a file',
        description:
          'Counts as an update of the portfolio. Answers the removed File object without data; ' +
          'its bytes are deleted once no portfolio, trashed portfolio or kept revision refers to them.',
        response: {
          200: json(FileAnswerSchema, 'Removed: the File object it was, without data', etag),
          ...errors(...CHANGE_ERRORS),
        },
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

  const authorizePortfolio = authorizeBeforeBody<{ portfolioId: string }>((user, params) =>
    service.authorizeChange(user, params.portfolioId),
  );
  const portfolioCommon = { ...common, params: PortfolioIdParamsSchema };

  app.put<{ Params: { portfolioId: string }; Body: unknown }>(
    '/api/v1/portfolio/:portfolioId/draftingProcess/order',
    {
      onRequest: authorizePortfolio,
      validatorCompiler: bodyValidatedByService(app),
      schema: {
        ...portfolioCommon,
        operationId: 'reorderDraftingProcess',
        summary: 'Put the drafting images in a new order',
        description:
          'The body names every drafting-process file once, in the new order; one revision. ' +
          'A list that adds, leaves out or doubles a file is refused (400) and changes nothing.',
        body: FileOrderBodySchema,
        response: {
          200: json(DraftingOrderAnswerSchema, 'Reordered: the drafting images in order', etag),
          ...errors(...CHANGE_ERRORS.filter((code) => code !== 'FILE_NOT_FOUND')),
        },
      },
    },
    async (request, reply) => {
      const record = await service.reorderDrafting(
        caller(request).user,
        request.params.portfolioId,
        request.body,
        conditionOf(request),
      );
      return withRevision(reply, record).send({
        draftingProcess: record.draftingProcess.map(listFileView),
        revision: record.revision,
      });
    },
  );

  app.post<{ Params: Params }>(
    '/api/v1/portfolio/:portfolioId/files/:fileId/make-cover',
    {
      onRequest: authorizeChange,
      schema: {
        ...common,
        operationId: 'makeCover',
        summary: 'Make a drafting image the cover',
        description:
          'One revision: the image becomes the cover, and the old cover takes its place among ' +
          'the drafting images (choose it again to undo). The cover itself: no change.',
        response: {
          200: json(CoverChoiceAnswerSchema, 'The new cover and the drafting images', etag),
          ...errors('VALIDATION_FAILED', 'UNSUPPORTED_FILE_TYPE', ...CHANGE_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const record = await service.makeCover(
        caller(request).user,
        request.params.portfolioId,
        request.params.fileId,
        conditionOf(request),
      );
      return withRevision(reply, record).send({
        cover: coverFileView(record.cover!),
        draftingProcess: record.draftingProcess.map(listFileView),
        revision: record.revision,
      });
    },
  );

  app.patch<{ Params: { portfolioId: string }; Body: unknown }>(
    '/api/v1/portfolio/:portfolioId/files',
    {
      onRequest: authorizePortfolio,
      validatorCompiler: bodyValidatedByService(app),
      schema: {
        ...portfolioCommon,
        operationId: 'describeFiles',
        summary: 'Give several files one description',
        description:
          'Sets the same description on every named file (any slot) in one revision; an unknown ' +
          'file id refuses the whole request.',
        body: FilesDescriptionBodySchema,
        response: {
          200: json(FilesDescriptionAnswerSchema, 'Described: the files without data', etag),
          ...errors(...CHANGE_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const { record, files } = await service.describeFiles(
        caller(request).user,
        request.params.portfolioId,
        request.body,
        conditionOf(request),
      );
      return withRevision(reply, record).send({
        files: files.map(({ slot, file }) => fileView(slot, file)),
        revision: record.revision,
      });
    },
  );
}
