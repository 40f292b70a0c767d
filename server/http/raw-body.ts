import { createWriteStream } from 'node:fs';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parse as parseContentDisposition } from 'content-disposition';
import type { FastifyInstance, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { ApiError } from '../errors';
import { tooLarge } from '../media/receive-file';

/**
 * Raw request bodies: the bytes of one file (or blob) as the body itself, without multipart
 * framing or base64. Fastify parses nothing of them: the route reads the request stream itself,
 * so it can write it to disk as it arrives and check its limits before the first byte.
 */

/**
 * Makes Fastify hand bodies of `contentTypes` (`'*'`: any type without a parser of its own, such
 * as JSON and multipart) to the routes of this plugin as the request stream, unread. Call it
 * inside the encapsulated plugin of those routes only: everywhere else such bodies stay 415.
 */
export function acceptRawBodies(app: FastifyInstance, contentTypes: string[] | '*'): void {
  if (contentTypes === '*' && app.hasContentTypeParser('text/plain')) {
    // Fastify's own text/plain parser would read a text file into a string.
    app.removeContentTypeParser('text/plain');
  }
  app.addContentTypeParser(contentTypes, (_request, payload, done) => done(null, payload));
}

/** The unread request stream a raw-body route was handed, or undefined for a parsed body. */
export function rawBodyOf(request: FastifyRequest): Readable | undefined {
  return request.body instanceof Readable ? request.body : undefined;
}

/**
 * Reads a raw body through `read`, which may destroy the stream it is given when it refuses the
 * body (over a limit, a pixel bomb) without destroying the request, and so the connection: the
 * refusal can still be answered. That answer then closes the connection rather than reading the
 * rest of a body nobody wants (plugins/close-unread-bodies.ts).
 */
export async function readRawBody<T>(
  body: Readable,
  read: (stream: Readable) => Promise<T>,
): Promise<T> {
  const stream = new BodyStream(body);
  try {
    return await read(stream);
  } catch (error) {
    stream.destroy();
    throw error;
  }
}

/**
 * The request body as a stream of its own. A client that goes away fails it with ECONNRESET, as
 * the request itself would, but only after every byte that arrived before was read from it (a
 * resumable upload keeps them all); destroying it leaves the request alone.
 */
class BodyStream extends Readable {
  private cut: Error | undefined;

  constructor(private readonly body: Readable) {
    super({ highWaterMark: 1024 * 1024 });
    body.on('data', this.onData);
    body.once('end', this.onEnd);
    body.once('error', this.onCut);
    body.once('close', this.onCut);
  }

  override _read(): void {
    if (this.cut) this.destroy(this.cut);
    else this.body.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.body.off('data', this.onData);
    this.body.off('end', this.onEnd);
    this.body.off('error', this.onCut);
    this.body.off('close', this.onCut);
    callback(error);
  }

  private readonly onData = (chunk: Buffer) => {
    if (!this.push(chunk)) this.body.pause();
  };

  private readonly onEnd = () => {
    this.push(null);
  };

  private readonly onCut = () => {
    if (this.body.readableEnded || this.cut) return;
    this.cut = Object.assign(new Error('The client closed the connection mid-body.'), {
      code: 'ECONNRESET',
    });
    // What is still buffered is read first, then the stream fails.
    if (this.readableLength === 0) return this.destroy(this.cut);
    const failOnceRead = () => {
      if (this.readableLength > 0) return;
      this.off('data', failOnceRead);
      // After the reader's own 'data' handler has taken the last chunk.
      process.nextTick(() => this.destroy(this.cut));
    };
    this.on('data', failOnceRead);
  };
}

/**
 * Route option for routes that take raw bodies: the request stream is never validated against
 * the body schema (which documents it as binary); the other content types of the route, and its
 * params, query and headers, are validated as on every route.
 */
export function rawBodiesUnvalidated(
  app: FastifyInstance,
  validated: string[] = ['application/json'],
): FastifySchemaCompiler<unknown> {
  const compile = app.validatorCompiler;
  if (!compile) throw new Error('register the validation plugin before the routes');
  return (route) =>
    route.httpPart === 'body' && !validated.includes(route.contentType ?? '')
      ? () => true
      : compile(route);
}

/**
 * The body's length as the client declared it, refused with 413 before a byte is read when it is
 * over `maxBytes`. Undefined for a chunked body: its limit is then checked as it arrives.
 */
export function declaredLength(request: FastifyRequest, maxBytes: number): number | undefined {
  const header = request.headers['content-length'];
  if (header === undefined) return undefined;
  const length = Number(header);
  if (length > maxBytes) throw tooLarge(maxBytes);
  return length;
}

/**
 * The file name of a raw upload, from `Content-Disposition: attachment; filename="…"` (RFC 6266;
 * `filename*=UTF-8''…` wins over `filename` when both are sent). Without one: a clear 400.
 */
export function filenameOf(request: FastifyRequest): string {
  const header = request.headers['content-disposition'];
  const missing = () =>
    new ApiError(
      'VALIDATION_FAILED',
      'Name the file: send it with the header Content-Disposition: attachment; filename="<name>" ' +
        "(or filename*=UTF-8''<percent-encoded name>).",
      [{ field: 'headers.content-disposition', message: 'must name the file' }],
    );
  if (!header) throw missing();
  let filename: unknown;
  try {
    filename = parseContentDisposition(header).parameters.filename;
  } catch {
    throw new ApiError(
      'VALIDATION_FAILED',
      `The Content-Disposition header is not valid (RFC 6266): ${header.slice(0, 200)}`,
      [{ field: 'headers.content-disposition', message: 'must be a valid Content-Disposition' }],
    );
  }
  if (typeof filename !== 'string' || filename.trim() === '') throw missing();
  return filename;
}

/** Writes a body to a new file at `path`, refusing it with `tooLarge()` once it passes `maxBytes`. */
export async function saveBounded(
  body: Readable,
  path: string,
  maxBytes: number,
  tooLarge: () => ApiError,
): Promise<void> {
  let seen = 0;
  const bound = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > maxBytes) return callback(tooLarge());
      callback(null, chunk);
    },
  });
  await pipeline(body, bound, createWriteStream(path, { flags: 'wx' }));
}
