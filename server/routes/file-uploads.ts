import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  CoverFileSchema,
  FilesAddedSchema,
  FileUploadBodySchema,
  IfMatchHeadersSchema,
  ListFileSchema,
  PortfolioIdParamsSchema,
  type FileSlot,
  type FileUploadBody,
} from '../../shared';
import { fileView } from '../domain/portfolio-view';
import { acceptRawBodies, rawBodiesUnvalidated } from '../http/raw-body';
import { errors, HEADERS, json } from '../openapi/responses';
import { caller } from '../plugins/auth';
import { receiveUploads } from './receive-upload';
import { authorizeBeforeBody, conditionOf, withRevision } from './route-support';

type Params = { portfolioId: string };

const MULTIPART_UPLOAD_DOC = {
  $id: 'MultipartFileUpload',
  properties: {
    file: {
      type: 'string',
      format: 'binary',
      description:
        'The file: one part named "file"; draftingProcess and additionalDocument take several, each optionally followed by its "description"',
    },
    description: {
      type: 'string',
      maxLength: 1000,
      description: 'The description of the file part before it (or, sent first, of the first file)',
    },
  },
  required: ['file'],
};

/** A raw upload: the file's own bytes as the body. */
const RAW_UPLOAD_DOC = {
  $id: 'RawFileUpload',
  type: 'string',
  format: 'binary',
  description:
    'The file\'s own bytes, named by `Content-Disposition: attachment; filename="<name>"` ' +
    "(or `filename*=UTF-8''<percent-encoded name>`). Any Content-Type but JSON and multipart: " +
    'the type is sniffed from the bytes all the same.',
};

const UploadHeadersSchema = Type.Object({
  ...IfMatchHeadersSchema.properties,
  'content-disposition': Type.Optional(
    Type.String({
      maxLength: 2000,
      description:
        'Raw uploads only, and required there: `attachment; filename="<name>"` (RFC 6266)',
    }),
  ),
});

/** What an upload can answer besides its success. */
const UPLOAD_ERRORS = [
  'FORBIDDEN',
  'CATEGORY_NOT_ALLOWED',
  'PORTFOLIO_NOT_FOUND',
  'REVISION_CONFLICT',
  'TOO_MANY_FILES',
  'IMAGE_TOO_LARGE',
  'UNSUPPORTED_FILE_TYPE',
] as const;

const OPERATION_IDS: Record<FileSlot, string> = {
  cover: 'setCover',
  draftingProcess: 'addDraftingProcessFile',
  additionalDocument: 'addAdditionalDocument',
};

const UPLOAD_DESCRIPTION =
  "Send the file's own bytes as the body (any Content-Type but JSON and multipart, with " +
  '`Content-Disposition: attachment; filename="<name>"`; the cheapest way), multipart/form-data ' +
  'with the field `file` (and optionally `description`), or JSON ' +
  '`{originalFilename, description, data}` with base64 `data`. The type is sniffed from the bytes. ' +
  'Counts as an update of the portfolio (revision + 1; same role and allowEdit rules; ' +
  '`If-Match: "<revision>"` makes it conditional). Over the file, pixel or list limit: 413, ' +
  'and nothing changes; a type the slot does not accept: 415.';

const SLOT_DESCRIPTION: Record<FileSlot, string> = {
  cover: 'Raster images only. Answers the File object without data (key `fileId`).',
  draftingProcess: 'Accepts images and PDF',
  additionalDocument: 'Accepts PDF, Office/OpenDocument, RTF, text, CSV, zip and images',
};

const SEVERAL_FILES =
  'A multipart body may carry several `file` parts, each optionally followed by its `description`: ' +
  'they are added as one change, one revision, and the answer is `{files, revision}`; one file refused ' +
  'refuses them all. One file answers the File object, as always.';

/** One file: the File object (as single-file clients expect); several: `{files, revision}`. */
const AddedAnswerSchema = Type.Union([ListFileSchema, FilesAddedSchema]);

/**
 * Uploads: the cover, and files appended to draftingProcess or additionalDocument (DESIGN §5).
 * Role, category and room in the list are checked before a byte of the body is read; a JSON
 * body is then validated here, as the transport it is, and the service takes the file from there.
 */
export default async function fileUploadRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSession);
  const common = { tags: ['files'], security: [{ session: [] }] };
  const service = app.portfolioService;
  const limits = app.config.limits;
  const receiving = { limits, tempPath: () => app.blobStore.tempPath() };
  // Any body that is neither JSON nor multipart is the file itself (see http/raw-body.ts).
  acceptRawBodies(app, '*');

  /** Role, visibility, category and room in the list, before a byte of the body is read. */
  const authorizeUpload = (slot: FileSlot) =>
    authorizeBeforeBody<Params>((user, params, request) =>
      service.authorizeUpload(user, params.portfolioId, slot, conditionOf(request)),
    );

  const route = (slot: FileSlot, status: 200 | 201) => ({
    onRequest: authorizeUpload(slot),
    validatorCompiler: rawBodiesUnvalidated(app),
    schema: {
      ...common,
      operationId: OPERATION_IDS[slot],
      summary: slot === 'cover' ? 'Set or replace the cover' : `Append a file to ${slot}`,
      description:
        slot === 'cover'
          ? `${UPLOAD_DESCRIPTION} ${SLOT_DESCRIPTION.cover}`
          : `${UPLOAD_DESCRIPTION} ${SLOT_DESCRIPTION[slot]}; at most ${limits.filesPerList} files. Answers the File object without data (key \`fileID\`). ${SEVERAL_FILES}`,
      consumes: ['multipart/form-data', 'application/json', 'application/octet-stream', '*/*'],
      params: PortfolioIdParamsSchema,
      headers: UploadHeadersSchema,
      // Only JSON bodies are validated by schema; multipart and raw bodies are streamed and
      // checked as they arrive (rawBodiesUnvalidated). Their schemas only document them.
      body: {
        content: {
          'application/json': { schema: FileUploadBodySchema },
          'multipart/form-data': { schema: MULTIPART_UPLOAD_DOC },
          'application/octet-stream': { schema: RAW_UPLOAD_DOC },
          '*/*': { schema: RAW_UPLOAD_DOC },
        },
      },
      response: {
        [status]: json(
          slot === 'cover' ? CoverFileSchema : AddedAnswerSchema,
          status === 201
            ? 'Added: the File object without data; several files: `{files, revision}`'
            : 'Set: the File object without data',
          { ETag: HEADERS.revisionEtag },
        ),
        ...errors(...UPLOAD_ERRORS),
      },
    },
  });

  async function upload(
    slot: FileSlot,
    request: FastifyRequest<{ Params: Params; Body: FileUploadBody | undefined }>,
  ) {
    const maxFiles = slot === 'cover' ? 1 : limits.filesPerList;
    const received = await receiveUploads(request, receiving, maxFiles);
    const { record, files } = await service.addFiles(
      caller(request).user,
      request.params.portfolioId,
      slot,
      received,
      conditionOf(request),
    );
    const views = files.map((file) => fileView(slot, file));
    const view = views.length === 1 ? views[0] : { files: views, revision: record.revision };
    return { record, view };
  }

  app.put<{ Params: Params; Body: FileUploadBody | undefined }>(
    '/api/v1/portfolio/:portfolioId/cover',
    route('cover', 200),
    async (request, reply) => {
      const { record, view } = await upload('cover', request);
      return withRevision(reply, record).send(view);
    },
  );

  for (const slot of ['draftingProcess', 'additionalDocument'] as const) {
    app.post<{ Params: Params; Body: FileUploadBody | undefined }>(
      `/api/v1/portfolio/:portfolioId/${slot}`,
      route(slot, 201),
      async (request, reply) => {
        const { record, view } = await upload(slot, request);
        return withRevision(reply.status(201), record).send(view);
      },
    );
  }
}
