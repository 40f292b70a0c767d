import type { ErrorObject } from 'ajv';
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError, errorBody } from '../errors';
import { StorageUnavailableError, type StorageFailure } from '../repositories/storage-backend';
import { apiErrorOf } from '../services/repository-errors';
import { validationFailure } from '../validation/ajv';

/** Fastify's own error codes that are the client's fault, mapped to our catalogue. */
function fromFastifyError(error: FastifyError, request: FastifyRequest): ApiError | null {
  switch (error.code) {
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('MALFORMED_JSON', 'The request body is not valid JSON.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_PARTS_LIMIT':
    case 'FST_FILES_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return new ApiError('PAYLOAD_TOO_LARGE', error.message);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(
        'UNSUPPORTED_MEDIA_TYPE',
        'Send the body as application/json (or multipart/form-data for uploads).',
      );
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('VALIDATION_FAILED', 'The Content-Length does not match the body.');
  }
  if (error instanceof SyntaxError && error.statusCode === 400)
    return new ApiError('MALFORMED_JSON');
  if (error.validation) {
    return validationFailure(error.validation as ErrorObject[], error.validationContext ?? 'body');
  }
  // @fastify/send (the API docs' static files): a path outside its folder (ForbiddenError) or no
  // such file. Either way there is nothing there, and nothing is said about why.
  if (error.statusCode === 403 || error.statusCode === 404) return routeNotFound(request);
  if (error.statusCode === 413) return new ApiError('PAYLOAD_TOO_LARGE', error.message);
  if (error.statusCode === 415) return new ApiError('UNSUPPORTED_MEDIA_TYPE', error.message);
  if (error.statusCode === 400) return new ApiError('VALIDATION_FAILED', error.message);
  return null;
}

function routeNotFound(request: FastifyRequest): ApiError {
  return new ApiError(
    'ROUTE_NOT_FOUND',
    `No endpoint ${request.method} ${request.url.split('?')[0]}.`,
  );
}

/** Stream errors that mean the other end stopped sending, not that the server failed. */
const CLIENT_GONE_CODES = new Set([
  'ERR_STREAM_PREMATURE_CLOSE',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
]);

/** A client that closed its connection mid-request (an upload cancelled, a tab closed). */
function isClientAbort(error: FastifyError, request: FastifyRequest): boolean {
  const raw = request.raw;
  return (raw.destroyed || raw.socket?.destroyed === true) && CLIENT_GONE_CODES.has(error.code);
}

/** One error shape for everything (DESIGN §6); internals of real faults are logged, never sent. */
export default fp(
  async function errorHandler(app: FastifyInstance) {
    app.setErrorHandler((error: FastifyError, request, reply) => {
      let apiError = error instanceof ApiError ? error : fromFastifyError(error, request);
      let failure: StorageFailure | undefined;
      if (!apiError) {
        if (isClientAbort(error, request)) {
          // Nobody is left to answer, and onRequestAbort below has logged it; a partial upload
          // was removed on the way out.
          apiError = new ApiError('VALIDATION_FAILED', 'The request was cut short.');
        } else if ((failure = app.backend.failureOf(error))) {
          if (failure instanceof StorageUnavailableError) {
            // The database went away (restart, network): the pool reconnects on the next query.
            request.log.warn(failure.message);
          } else {
            request.log.error({ err: error }, 'storage write failed');
          }
          apiError = apiErrorOf(failure) as ApiError;
        } else if (error.statusCode === 429) {
          apiError = new ApiError('RATE_LIMITED', error.message);
        } else {
          request.log.error({ err: error }, 'unhandled error');
          apiError = new ApiError('INTERNAL');
        }
      }
      void reply.status(apiError.statusCode).headers(apiError.headers).send(errorBody(apiError));
    });

    // A client that closes its connection before its request is complete (a cancelled upload):
    // one info line, whatever the route was doing with the body.
    app.addHook('onRequestAbort', (request, done) => {
      request.log.info('request aborted by the client');
      done();
    });

    app.setNotFoundHandler((request, reply) => {
      void reply.status(404).send(errorBody(routeNotFound(request)));
    });
  },
  { name: 'error-handler' },
);
