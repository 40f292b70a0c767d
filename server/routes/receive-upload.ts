import { unlink } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import type { FileUploadBody } from '../../shared';
import type { LimitOptions } from '../config';
import { ApiError } from '../errors';
import { declaredLength, filenameOf, rawBodyOf, readRawBody } from '../http/raw-body';
import { cleanFilename } from '../media/file-names';
import { receiveToFile, tooLarge } from '../media/receive-file';
import type { Upload } from '../services/portfolio-service';

/** Multipart framing (boundaries, part headers, the description) on top of the file itself. */
const MULTIPART_OVERHEAD_BYTES = 256 * 1024;

export interface ReceiveOptions {
  limits: Pick<LimitOptions, 'fileBytes' | 'imagePixels'>;
  /** A fresh temp path inside the blob store, where an adopted upload becomes a blob. */
  tempPath: () => string;
}

/**
 * Reads an upload's bytes into a temp file as they arrive (multipart or a raw body), or decodes
 * them from a JSON body, and starts inspecting and hashing them. HTTP in only: what the upload
 * may become is the service's to decide.
 */
export async function receiveUpload(
  request: FastifyRequest<{ Body: FileUploadBody | undefined }>,
  options: ReceiveOptions,
): Promise<Upload> {
  return (await receiveUploads(request, options, 1))[0]!;
}

/**
 * The same for an upload that may carry several files (DESIGN §16): several `file` parts of a
 * multipart body, at most `maxFiles`; a raw or JSON body is one file.
 */
export async function receiveUploads(
  request: FastifyRequest<{ Body: FileUploadBody | undefined }>,
  options: ReceiveOptions,
  maxFiles: number,
): Promise<Upload[]> {
  if (request.isMultipart()) return receiveMultipart(request, options, maxFiles);
  const raw = rawBodyOf(request);
  if (raw) return [await receiveRaw(request, raw, options)];
  if (request.body) return [await receiveJson(request.body, options)];
  throw new ApiError(
    'VALIDATION_FAILED',
    'Send the file as its own bytes (with Content-Disposition: attachment; filename="<name>"), ' +
      'as multipart/form-data, or as JSON {originalFilename, data}.',
  );
}

/**
 * The file's bytes as the body, of whatever Content-Type the client says (the type is sniffed
 * from the bytes all the same), named by Content-Disposition. The cheapest way in: no framing to
 * parse, no base64 to decode.
 */
async function receiveRaw(
  request: FastifyRequest,
  body: Readable,
  options: ReceiveOptions,
): Promise<Upload> {
  const { limits } = options;
  // Both before the first byte is read: a nameless or oversized upload costs nothing.
  const originalFilename = cleanFilename(filenameOf(request));
  declaredLength(request, limits.fileBytes);
  const tempPath = options.tempPath();
  try {
    const received = await readRawBody(body, (stream) =>
      receiveToFile(stream, tempPath, {
        maxBytes: limits.fileBytes,
        maxPixels: limits.imagePixels,
        clientName: originalFilename,
      }),
    );
    return { ...received, tempPath, originalFilename, description: '' };
  } catch (error) {
    await unlink(tempPath).catch(() => {});
    throw error;
  }
}

/**
 * Every `file` part of a multipart body, each into a temp file of its own. A `description` part
 * belongs to the file part before it; one before any file, to the first (as single-file clients
 * send it). More than `maxFiles` file parts is 413 at the first one too many.
 */
async function receiveMultipart(
  request: FastifyRequest,
  options: ReceiveOptions,
  maxFiles: number,
): Promise<Upload[]> {
  const { limits } = options;
  const length = Number(request.headers['content-length'] ?? 0);
  if (length > limits.fileBytes * maxFiles + MULTIPART_OVERHEAD_BYTES)
    throw tooLarge(limits.fileBytes);
  const uploads: Upload[] = [];
  let leadingDescription: string | undefined;
  let tempPath: string | undefined;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        if (part.fieldname !== 'description') throw unknownField(part.fieldname);
        const description = checkedDescription(String(part.value), part.valueTruncated);
        const last = uploads.at(-1);
        if (last) last.description = description;
        else leadingDescription = description;
        continue;
      }
      if (part.fieldname !== 'file') throw unknownField(part.fieldname);
      if (uploads.length === maxFiles) throw tooManyParts(maxFiles);
      tempPath = options.tempPath();
      const originalFilename = cleanFilename(unescapeFormName(part.filename));
      const received = await receiveToFile(part.file, tempPath, {
        maxBytes: limits.fileBytes,
        maxPixels: limits.imagePixels,
        clientName: originalFilename,
      });
      // busboy stops at the limit and marks the stream truncated instead of failing it.
      if (part.file.truncated) throw tooLarge(limits.fileBytes);
      uploads.push({ ...received, tempPath, originalFilename, description: '' });
      tempPath = undefined;
    }
  } catch (error) {
    const temps = [...uploads.map((upload) => upload.tempPath), ...(tempPath ? [tempPath] : [])];
    await Promise.all(temps.map((path) => unlink(path).catch(() => {})));
    throw error;
  }
  if (uploads.length === 0) {
    throw new ApiError('VALIDATION_FAILED', 'The multipart body has no `file` part.', [
      { field: 'body.file', message: 'is required' },
    ]);
  }
  if (leadingDescription !== undefined && uploads[0]!.description === '')
    uploads[0]!.description = leadingDescription;
  return uploads;
}

function tooManyParts(maxFiles: number): ApiError {
  return new ApiError(
    'TOO_MANY_FILES',
    maxFiles === 1
      ? 'Send one file here.'
      : `Send at most ${maxFiles} files at once; a list holds no more.`,
  );
}

async function receiveJson(body: FileUploadBody, options: ReceiveOptions): Promise<Upload> {
  const { limits } = options;
  const bytes = decodeBase64(body.data, limits.fileBytes);
  const tempPath = options.tempPath();
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
