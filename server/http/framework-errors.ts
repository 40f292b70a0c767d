import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, errorBody } from '../errors';

/**
 * Fastify's `frameworkErrors`: a request refused before any route was found (an address whose
 * percent-encoding is malformed, `%zz`). Answered in the one error shape (DESIGN §6), and on the
 * API only after the session is checked: who may not call learns nothing (401 first).
 */
export function frameworkErrors(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const refused =
    error.code === 'FST_ERR_BAD_URL'
      ? new ApiError(
          'VALIDATION_FAILED',
          'The address is not valid: each % in it must be followed by two hexadecimal digits.',
        )
      : new ApiError('VALIDATION_FAILED', 'The address is not valid.');
  // No route context here: the body is sent as text, not through a route's serializer.
  const answer = (apiError: ApiError) =>
    void reply
      .status(apiError.statusCode)
      .headers({ ...apiError.headers, 'content-type': 'application/json; charset=utf-8' })
      .send(JSON.stringify(errorBody(apiError)));
  const unauthorized = (cause: unknown) =>
    answer(cause instanceof ApiError ? cause : new ApiError('INTERNAL'));
  if (!request.url.startsWith('/api/')) return answer(refused);
  try {
    const found = request.server.sessions.authenticate(request.headers.authorization);
    if (found instanceof Promise) found.then(() => answer(refused), unauthorized);
    else answer(refused);
  } catch (cause) {
    unauthorized(cause);
  }
}
