import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { StoredFile } from '../../shared';
import { ApiError } from '../errors';
import type { BlobStore } from '../storage/blob-store';

/**
 * Bytes read from a blob at a time. A multiple of 3, so that each piece encodes to base64 on its
 * own (no padding inside the string); 48 KiB keeps one encode well under a millisecond.
 */
export const INLINE_CHUNK_BYTES = 3 * 16 * 1024;

const MB = 1024 * 1024;

/** Length of the base64 text of `bytes` bytes. */
const base64Length = (bytes: number) => 4 * Math.ceil(bytes / 3);

/**
 * The files whose base64 `data` an answer carries. While the answer object is built, each
 * `data` is a placeholder (a string no client text can hold: it carries a random nonce); the
 * serialized JSON is then sent with each placeholder replaced by the file's bytes, read and
 * encoded piece by piece as the socket takes them. Nothing holds more than a few pieces of a
 * file, whatever the number and size of the files.
 */
export class InlineData {
  private readonly files: StoredFile[] = [];
  /** Made with the first placeholder: most answers have none (random bytes were 6 % of a list). */
  private marker = '';

  /** Stands in for `file`'s base64 `data` in the answer object. */
  readonly placeholder = (file: StoredFile): string => {
    if (this.marker === '') this.marker = `inline-data-${randomBytes(16).toString('hex')}-`;
    this.files.push(file);
    return `${this.marker}${this.files.length - 1}`;
  };

  get isEmpty(): boolean {
    return this.files.length === 0;
  }

  /**
   * Splits the serialized answer at the placeholders it still holds (a field selection may have
   * dropped some): text, file, text, file, …, text.
   */
  split(json: string): { texts: string[]; files: StoredFile[] } {
    const pieces = json.split(new RegExp(`${this.marker}(\\d+)`));
    const texts = pieces.filter((_, index) => index % 2 === 0);
    const files = pieces
      .filter((_, index) => index % 2 === 1)
      .map((index) => this.files[Number(index)]!);
    return { texts, files };
  }
}

/** Base64 of a stream of bytes, piece by piece; a piece's last (size % 3) bytes move on to the
 *  next, so that no padding appears before the end. */
export async function* base64Pieces(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let carry: Buffer = Buffer.alloc(0);
  for await (const chunk of source) {
    const bytes = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
    const whole = bytes.length - (bytes.length % 3);
    if (whole > 0) yield Buffer.from(bytes.subarray(0, whole).toString('base64'), 'latin1');
    carry = Buffer.from(bytes.subarray(whole));
  }
  if (carry.length > 0) yield Buffer.from(carry.toString('base64'), 'latin1');
}

/** Fails when a blob is not the size it had when the answer began: its Content-Length is sent. */
async function* checkedSize(source: AsyncIterable<Buffer>, file: StoredFile, size: number) {
  let read = 0;
  for await (const chunk of source) {
    read += chunk.length;
    if (read > size) break;
    yield chunk;
  }
  if (read !== size) throw new Error(`Blob of file ${file.fileId} has ${read} bytes, not ${size}`);
}

async function* body(
  texts: string[],
  files: StoredFile[],
  sizes: number[],
  blobs: BlobStore,
  release: () => void,
) {
  try {
    for (const [index, text] of texts.entries()) {
      yield Buffer.from(text);
      const file = files[index];
      if (!file) continue;
      const blob = createReadStream(blobs.pathOf(file.sha256), {
        highWaterMark: INLINE_CHUNK_BYTES,
      });
      try {
        yield* base64Pieces(checkedSize(blob, file, sizes[index]!));
      } finally {
        blob.destroy();
      }
    }
  } finally {
    release();
  }
}

export interface InlineSendOptions {
  blobs: BlobStore;
  /** Most file bytes one answer may inline (limits.inlineBytes). */
  limitBytes: number;
  /** Headers of the answer (not of a 413). */
  headers?: Record<string, string>;
}

/**
 * Sends `json` (an answer serialized with InlineData placeholders) with the files' base64 in
 * their place, as a stream with an exact Content-Length, computed from the blobs' own sizes (a
 * record's `size` is never trusted for it). Over the limit, throws 413 RESPONSE_TOO_LARGE before
 * anything is read or sent.
 */
export async function sendWithInlineData(
  reply: FastifyReply,
  json: string,
  inline: InlineData,
  { blobs, limitBytes, headers = {} }: InlineSendOptions,
): Promise<FastifyReply> {
  const { texts, files } = inline.split(json);
  const release = blobs.hold(files.map((file) => file.sha256));
  let sizes: number[];
  try {
    sizes = await Promise.all(
      files.map(async (file) => {
        const size = await blobs.sizeOf(file.sha256);
        if (size === undefined) throw new Error(`The blob of file ${file.fileId} is missing`);
        return size;
      }),
    );
  } catch (error) {
    release();
    throw error;
  }
  const fileBytes = sizes.reduce((sum, size) => sum + size, 0);
  if (fileBytes > limitBytes) {
    release();
    throw new ApiError(
      'RESPONSE_TOO_LARGE',
      `This answer would inline ${(fileBytes / MB).toFixed(1)} MB of file data, more than the ` +
        `${(limitBytes / MB).toFixed(1)} MB allowed. Leave "data" out with the "field" parameter ` +
        'and fetch the files from their URLs (/api/v1/portfolio/{id}/files/{fileId}).',
    );
  }
  const length =
    texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0) +
    sizes.reduce((sum, size) => sum + base64Length(size), 0);
  return reply
    .headers(headers)
    .type('application/json; charset=utf-8')
    .header('content-length', length)
    .send(Readable.from(body(texts, files, sizes, blobs, release), { objectMode: false }));
}
