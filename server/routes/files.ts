import { Type } from '@sinclair/typebox';
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  CoverFileSchema,
  FileDescriptionBodySchema,
  FileParamsSchema,
  FileUploadBodySchema,
  ListFileSchema,
  PortfolioIdParamsSchema,
  ThumbnailQuerySchema,
  type CoverFile,
  type FileDescriptionBody,
  type FileSlot,
  type FileUploadBody,
  type ListFile,
  type PortfolioRecord,
  type StoredFile,
} from '../../shared';
import {
  assertAccepted,
  assertRoom,
  findFile,
  withAddedFile,
  withChangedFile,
} from '../domain/portfolio-files';
import { assertMayUpdate, expectedRevision, isVisibleTo } from '../domain/portfolio-rules';
import { coverFileView, listFileView } from '../domain/portfolio-view';
import { ApiError } from '../errors';
import {
  binary,
  empty,
  errors,
  FileDownloadHeadersSchema,
  HEADERS,
  IfMatchHeadersSchema,
  json,
  ThumbnailHeadersSchema,
} from '../openapi/responses';
import { etagMatches, parseRange } from '../media/conditional-get';
import { cleanFilename, contentDisposition, downloadName } from '../media/file-names';
import { RASTER_TYPES } from '../media/inspect-file';
import { receiveToFile, tooLarge, type Received } from '../media/receive-file';
import { THUMBNAIL_WIDTHS, type ThumbnailWidth } from '../media/thumbnails';
import { caller } from '../plugins/auth';
import type { Release } from '../storage/blob-store';

type PortfolioParams = { portfolioId: string };
type FileParams = { portfolioId: string; fileId: string };

/** What a change of a portfolio's files can answer besides its success. */
const CHANGE_ERRORS = [
  'FORBIDDEN',
  'CATEGORY_NOT_ALLOWED',
  'PORTFOLIO_NOT_FOUND',
  'REVISION_CONFLICT',
] as const;
const UPLOAD_ERRORS = [
  ...CHANGE_ERRORS,
  'TOO_MANY_FILES',
  'IMAGE_TOO_LARGE',
  'UNSUPPORTED_FILE_TYPE',
] as const;
const etag = { ETag: HEADERS.revisionEtag };
/** A file answer names its file in the slot's spelling: `fileId` (cover) or `fileID` (lists). */
const AnyFileSchema = Type.Union([CoverFileSchema, ListFileSchema]);

/** A received upload: its bytes in a temp file of the blob store, not yet adopted. */
interface Upload extends Received {
  tempPath: string;
  originalFilename: string;
  description: string;
}

/** Multipart framing (boundaries, part headers, the description) on top of the file itself. */
const MULTIPART_OVERHEAD_BYTES = 256 * 1024;

const MULTIPART_UPLOAD_DOC = {
  $id: 'MultipartFileUpload',
  properties: {
    file: {
      type: 'string',
      format: 'binary',
      description: 'The file (exactly one part named "file")',
    },
    description: { type: 'string', maxLength: 1000 },
  },
  required: ['file'],
};

const UPLOAD_DESCRIPTION =
  'Send multipart/form-data with the field `file` (and optionally `description`), or JSON ' +
  '`{originalFilename, description, data}` with base64 `data`. The type is sniffed from the bytes. ' +
  'Counts as an update of the portfolio (revision + 1; same role and allowEdit rules; ' +
  '`If-Match: "<revision>"` makes it conditional). Over the file, pixel or list limit: 413, ' +
  'and nothing changes; a type the slot does not accept: 415.';

export default async function fileRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSession);
  const common = { tags: ['files'], security: [{ session: [] }] };
  const limits = app.config.limits;

  function visiblePortfolio(request: FastifyRequest<{ Params: PortfolioParams }>) {
    const record = app.portfolioRepository.get(request.params.portfolioId);
    if (!record || !isVisibleTo(caller(request).user, record)) {
      throw new ApiError('PORTFOLIO_NOT_FOUND', `No portfolio "${request.params.portfolioId}".`);
    }
    return record;
  }

  /** The portfolio, if the caller may change it now and it is at the revision asked for. */
  function editablePortfolio(request: FastifyRequest<{ Params: PortfolioParams }>) {
    const record = visiblePortfolio(request);
    assertMayUpdate(caller(request).user, record, {});
    const expected = expectedRevision({}, request.headers['if-match']);
    if (expected !== undefined && expected !== record.revision) {
      throw new ApiError(
        'REVISION_CONFLICT',
        `The portfolio is at revision ${record.revision}, not ${expected}; reload it and try again.`,
        [{ field: 'headers.if-match', message: `current revision is ${record.revision}` }],
      );
    }
    return record;
  }

  function fileView(slot: FileSlot, file: StoredFile): CoverFile | ListFile {
    return slot === 'cover' ? coverFileView(file) : listFileView(file);
  }

  async function receiveMultipart(request: FastifyRequest): Promise<Upload> {
    const length = Number(request.headers['content-length'] ?? 0);
    if (length > limits.fileBytes + MULTIPART_OVERHEAD_BYTES) throw tooLarge(limits.fileBytes);
    let file: { tempPath: string; originalFilename: string; received: Received } | undefined;
    let tempPath: string | undefined;
    let description = '';
    try {
      for await (const part of request.parts()) {
        if (part.type === 'field') {
          if (part.fieldname !== 'description') throw unknownField(part.fieldname);
          description = checkedDescription(String(part.value), part.valueTruncated);
          continue;
        }
        if (part.fieldname !== 'file') throw unknownField(part.fieldname);
        tempPath = app.blobStore.tempPath();
        const originalFilename = cleanFilename(unescapeFormName(part.filename));
        const received = await receiveToFile(part.file, tempPath, {
          maxBytes: limits.fileBytes,
          maxPixels: limits.imagePixels,
          clientName: originalFilename,
        });
        // busboy stops at the limit and marks the stream truncated instead of failing it.
        if (part.file.truncated) throw tooLarge(limits.fileBytes);
        file = { tempPath, originalFilename, received };
      }
    } catch (error) {
      if (tempPath) await unlink(tempPath).catch(() => {});
      throw error;
    }
    if (!file) {
      throw new ApiError('VALIDATION_FAILED', 'The multipart body has no `file` part.', [
        { field: 'body.file', message: 'is required' },
      ]);
    }
    return {
      ...file.received,
      tempPath: file.tempPath,
      originalFilename: file.originalFilename,
      description,
    };
  }

  async function receiveJson(body: FileUploadBody): Promise<Upload> {
    const bytes = decodeBase64(body.data, limits.fileBytes);
    const tempPath = app.blobStore.tempPath();
    const originalFilename = cleanFilename(body.originalFilename);
    try {
      const received = await receiveToFile([bytes], tempPath, {
        maxBytes: limits.fileBytes,
        maxPixels: limits.imagePixels,
        clientName: originalFilename,
      });
      return { ...received, tempPath, originalFilename, description: body.description ?? '' };
    } catch (error) {
      await unlink(tempPath).catch(() => {});
      throw error;
    }
  }

  /**
   * Receive, inspect, store the blob durably, then commit the record that points to it. The
   * portfolio is checked again after the bytes arrived: it may have changed meanwhile.
   */
  async function upload(
    slot: FileSlot,
    request: FastifyRequest<{ Params: PortfolioParams; Body: FileUploadBody | undefined }>,
  ) {
    let received: Upload;
    if (request.isMultipart()) received = await receiveMultipart(request);
    else if (request.body) received = await receiveJson(request.body);
    else {
      throw new ApiError(
        'VALIDATION_FAILED',
        'Send the file as multipart/form-data or as JSON {originalFilename, data}.',
      );
    }
    let release: Release | undefined;
    let committed = false;
    try {
      // The file is written; its inspection, the last of its hashing and its fsync may still be
      // running. Adopting waits for the fsync.
      const inspection = await received.inspection;
      assertAccepted(slot, inspection.kind, inspection.mimeType);
      const { md5, sha256 } = await received.hashes;
      release = await app.blobStore.adopt(received.tempPath, sha256, received.durable);

      const current = editablePortfolio(request);
      assertRoom(current, slot, limits.filesPerList);
      const now = Date.now();
      const file: StoredFile = {
        fileId: randomUUID(),
        originalFilename: received.originalFilename,
        fullFileExtension: inspection.extension,
        mimeType: inspection.mimeType,
        description: received.description,
        createdTime: now,
        modifiedTime: now,
        md5Checksum: md5,
        sha256,
        size: received.size,
        dimention: inspection.dimention,
      };
      const { next, replaced } = withAddedFile(current, slot, file, now);
      await app.portfolioRepository.replace(next);
      committed = true;
      if (replaced) app.blobStore.collect([replaced.sha256]);
      return { record: next, view: fileView(slot, file) };
    } finally {
      release?.();
      if (!release) await unlink(received.tempPath).catch(() => {});
      else if (!committed) app.blobStore.collect([(await received.hashes).sha256]);
    }
  }

  const uploadSchema = (slot: FileSlot, status: 200 | 201) => ({
    ...common,
    consumes: ['multipart/form-data', 'application/json'],
    params: PortfolioIdParamsSchema,
    headers: IfMatchHeadersSchema,
    // Only JSON bodies are validated by schema; multipart is streamed and checked as it arrives.
    // Its schema has no `type`, so it documents the form without rejecting the unparsed body.
    body: {
      content: {
        'application/json': { schema: FileUploadBodySchema },
        'multipart/form-data': { schema: MULTIPART_UPLOAD_DOC },
      },
    },
    response: {
      [status]: json(
        slot === 'cover' ? CoverFileSchema : ListFileSchema,
        status === 201
          ? 'Added: the File object without data'
          : 'Set: the File object without data',
        etag,
      ),
      ...errors(...UPLOAD_ERRORS),
    },
  });

  /** Rejects before a single byte of the body is read: no session, role, category or room. */
  const checkBeforeBody = (slot: FileSlot) =>
    async function (request: FastifyRequest<{ Params: PortfolioParams }>) {
      assertRoom(editablePortfolio(request), slot, limits.filesPerList);
    };

  app.put<{ Params: PortfolioParams; Body: FileUploadBody | undefined }>(
    '/api/v1/portfolio/:portfolioId/cover',
    {
      onRequest: checkBeforeBody('cover'),
      schema: {
        ...uploadSchema('cover', 200),
        operationId: 'setCover',
        summary: 'Set or replace the cover',
        description: `${UPLOAD_DESCRIPTION} Raster images only. Answers the File object without data (key \`fileId\`).`,
      },
    },
    async (request, reply) => {
      const { record, view } = await upload('cover', request);
      return reply.header('etag', `"${record.revision}"`).send(view);
    },
  );

  for (const slot of ['draftingProcess', 'additionalDocument'] as const) {
    app.post<{ Params: PortfolioParams; Body: FileUploadBody | undefined }>(
      `/api/v1/portfolio/:portfolioId/${slot}`,
      {
        onRequest: checkBeforeBody(slot),
        schema: {
          ...uploadSchema(slot, 201),
          operationId:
            slot === 'draftingProcess' ? 'addDraftingProcessFile' : 'addAdditionalDocument',
          summary: `Append a file to ${slot}`,
          description: `${UPLOAD_DESCRIPTION} Accepts ${slot === 'draftingProcess' ? 'images and PDF' : 'PDF, Office/OpenDocument, RTF, text, CSV, zip and images'}; at most ${limits.filesPerList} files. Answers the File object without data (key \`fileID\`).`,
        },
      },
      async (request, reply) => {
        const { record, view } = await upload(slot, request);
        return reply.status(201).header('etag', `"${record.revision}"`).send(view);
      },
    );
  }

  const fileSchema = { ...common, params: FileParamsSchema };

  app.patch<{ Params: FileParams; Body: FileDescriptionBody }>(
    '/api/v1/portfolio/:portfolioId/files/:fileId',
    {
      schema: {
        ...fileSchema,
        operationId: 'updateFileDescription',
        summary: "Change a file's description",
        description: 'Counts as an update of the portfolio. Answers the File object without data.',
        headers: IfMatchHeadersSchema,
        body: FileDescriptionBodySchema,
        response: {
          200: json(AnyFileSchema, 'Changed: the File object without data', etag),
          ...errors(...CHANGE_ERRORS, 'FILE_NOT_FOUND'),
        },
      },
    },
    async (request, reply) => {
      const current = editablePortfolio(request);
      const found = requireFile(current, request.params.fileId);
      const now = Date.now();
      const changed = { ...found.file, description: request.body.description, modifiedTime: now };
      const next = withChangedFile(current, found.file.fileId, () => changed, now);
      await app.portfolioRepository.replace(next);
      return reply.header('etag', `"${next.revision}"`).send(fileView(found.slot, changed));
    },
  );

  app.delete<{ Params: FileParams }>(
    '/api/v1/portfolio/:portfolioId/files/:fileId',
    {
      schema: {
        ...fileSchema,
        operationId: 'deleteFile',
        summary: 'Remove a file',
        description:
          'Counts as an update of the portfolio. Answers the removed File object without data; ' +
          'its bytes are deleted once no portfolio refers to them.',
        headers: IfMatchHeadersSchema,
        response: {
          200: json(AnyFileSchema, 'Removed: the File object it was, without data', etag),
          ...errors(...CHANGE_ERRORS, 'FILE_NOT_FOUND'),
        },
      },
    },
    async (request, reply) => {
      const current = editablePortfolio(request);
      const found = requireFile(current, request.params.fileId);
      const next = withChangedFile(current, found.file.fileId, () => null, Date.now());
      await app.portfolioRepository.replace(next);
      app.blobStore.collect([found.file.sha256]);
      return reply.header('etag', `"${next.revision}"`).send(fileView(found.slot, found.file));
    },
  );

  app.get<{ Params: FileParams }>(
    '/api/v1/portfolio/:portfolioId/files/:fileId',
    {
      schema: {
        ...fileSchema,
        operationId: 'downloadFile',
        summary: "A file's bytes",
        description:
          'Content-Type as sniffed, ETag = "<md5>", If-None-Match (304), single byte Range (206, ' +
          '416), Content-Disposition with a safe name. Raster images are inline; everything else ' +
          'is an attachment with Content-Security-Policy: sandbox.',
        headers: FileDownloadHeadersSchema,
        response: {
          200: binary('*/*', 'The whole file, of its sniffed Content-Type', fileHeaders),
          206: binary('*/*', 'The byte range asked for', {
            ...fileHeaders,
            'Content-Range': HEADERS.contentRange,
          }),
          304: empty('The ETag sent in If-None-Match is current', { ETag: HEADERS.fileEtag }),
          ...errors('PORTFOLIO_NOT_FOUND', 'FILE_NOT_FOUND', 'RANGE_NOT_SATISFIABLE'),
        },
      },
    },
    async (request, reply) => {
      const file = requireFile(visiblePortfolio(request), request.params.fileId).file;
      const etag = `"${file.md5Checksum}"`;
      const raster = RASTER_TYPES.has(file.mimeType);
      const name = downloadName(file.originalFilename, file.fullFileExtension);
      safeHeaders(reply, raster)
        .header('etag', etag)
        .header('accept-ranges', 'bytes')
        .header('content-disposition', contentDisposition(raster ? 'inline' : 'attachment', name))
        .type(
          file.mimeType.startsWith('text/') ? `${file.mimeType}; charset=utf-8` : file.mimeType,
        );
      if (etagMatches(request.headers['if-none-match'], etag)) return reply.status(304).send();

      const ifRange = request.headers['if-range'];
      const range =
        ifRange === undefined || etagMatches(String(ifRange), etag)
          ? parseRange(request.headers.range, file.size)
          : ({ kind: 'full' } as const);
      if (range.kind === 'unsatisfiable') {
        throw new ApiError(
          'RANGE_NOT_SATISFIABLE',
          `The file has ${file.size} bytes; the range "${request.headers.range}" lies outside it.`,
          [],
          { 'content-range': `bytes */${file.size}` },
        );
      }
      if (range.kind === 'partial') {
        return reply
          .status(206)
          .header('content-range', `bytes ${range.start}-${range.end}/${file.size}`)
          .header('content-length', range.end - range.start + 1)
          .send(app.blobStore.readStream(file.sha256, range));
      }
      return reply.header('content-length', file.size).send(app.blobStore.readStream(file.sha256));
    },
  );

  app.get<{ Params: FileParams; Querystring: { width?: number } }>(
    '/api/v1/portfolio/:portfolioId/files/:fileId/thumbnail',
    {
      schema: {
        ...fileSchema,
        operationId: 'getThumbnail',
        summary: 'A WebP thumbnail of an image file',
        description: `width: one of ${THUMBNAIL_WIDTHS.join(', ')} (default 256); never wider than the image. ETag and 304 as for the file; 415 for files that are not images.`,
        querystring: ThumbnailQuerySchema,
        headers: ThumbnailHeadersSchema,
        response: {
          200: binary('image/webp', 'The thumbnail', {
            ETag: HEADERS.thumbnailEtag,
            'Content-Disposition': HEADERS.contentDisposition,
          }),
          304: empty('The ETag sent in If-None-Match is current', {
            ETag: HEADERS.thumbnailEtag,
          }),
          ...errors(
            'INVALID_QUERY',
            'PORTFOLIO_NOT_FOUND',
            'FILE_NOT_FOUND',
            'UNSUPPORTED_FILE_TYPE',
          ),
        },
      },
    },
    async (request, reply) => {
      const width = request.query.width ?? 256;
      if (!(THUMBNAIL_WIDTHS as readonly number[]).includes(width)) {
        const message = `width must be one of ${THUMBNAIL_WIDTHS.join(', ')}.`;
        throw new ApiError('INVALID_QUERY', message, [{ field: 'querystring.width', message }]);
      }
      const file = requireFile(visiblePortfolio(request), request.params.fileId).file;
      if (!RASTER_TYPES.has(file.mimeType)) {
        throw new ApiError('UNSUPPORTED_FILE_TYPE', 'Only images have thumbnails.');
      }
      const etag = `"${file.md5Checksum}-w${width}"`;
      const name = `${file.originalFilename.replace(/\.[^.]*$/, '')}-${width}.webp`;
      safeHeaders(reply, true)
        .header('etag', etag)
        .header('content-disposition', contentDisposition('inline', name))
        .type('image/webp');
      if (etagMatches(request.headers['if-none-match'], etag)) return reply.status(304).send();
      const path = await app.thumbnails.get(file.sha256, width as ThumbnailWidth);
      return reply.send(createReadStream(path));
    },
  );
}

/** The headers of a file answer with bytes, as the document declares them. */
const fileHeaders = {
  ETag: HEADERS.fileEtag,
  'Content-Disposition': HEADERS.contentDisposition,
  'Content-Length': HEADERS.contentLength,
  'Accept-Ranges': HEADERS.acceptRanges,
};

/** Headers on every file answer: never sniffed by the browser, inline only for raster images. */
function safeHeaders(reply: FastifyReply, raster: boolean): FastifyReply {
  reply.header('x-content-type-options', 'nosniff').header('cache-control', 'private, no-cache');
  if (!raster) reply.header('content-security-policy', 'sandbox');
  return reply;
}

function requireFile(record: PortfolioRecord, fileId: string) {
  const found = findFile(record, fileId);
  if (!found) throw new ApiError('FILE_NOT_FOUND', `No file "${fileId}" in this portfolio.`);
  return found;
}

/**
 * Browsers send `"`, CR and LF in a multipart file name as %22, %0D and %0A (HTML's form
 * encoding); nothing else is escaped, so nothing else is undone.
 */
function unescapeFormName(name: string): string {
  return name.replace(/%22|%0D|%0A/gi, (escape) => decodeURIComponent(escape));
}

function unknownField(name: string): ApiError {
  return new ApiError(
    'VALIDATION_FAILED',
    `Unknown multipart field "${name}"; send "file" and optionally "description".`,
    [{ field: `body.${name}`, message: 'is not a known field' }],
  );
}

function checkedDescription(value: string, truncated: boolean): string {
  if (truncated || [...value].length > 1000) {
    throw new ApiError('VALIDATION_FAILED', 'description must have at most 1000 characters.', [
      { field: 'body.description', message: 'must NOT have more than 1000 characters' },
    ]);
  }
  return value;
}

/**
 * Strict base64 (or base64url), optionally as a data URL. Node's decoder skips characters it does
 * not know, so a decoded length other than the expected one means the text was not base64.
 */
function decodeBase64(text: string, maxBytes: number): Buffer {
  const data = text.replace(/^data:[^,]{0,200};base64,/, '');
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  const expected = Math.floor(((data.length - padding) * 3) / 4);
  if (expected > maxBytes) throw tooLarge(maxBytes);
  const bytes = Buffer.from(data, 'base64');
  if (data.length % 4 === 1 || bytes.length !== expected) {
    throw new ApiError('VALIDATION_FAILED', 'data is not valid base64.', [
      { field: 'body.data', message: 'must be base64' },
    ]);
  }
  return bytes;
}
