import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ApiError, errorBody } from '../errors';

type ConnectionError = Error & { code?: string };

/** Node's answer for a request it gave up on before any route saw it, in the one error shape. */
function apiErrorOf(error: ConnectionError): ApiError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError('REQUEST_TIMEOUT');
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError('PAYLOAD_TOO_LARGE', 'The request headers are too large.');
    default:
      return new ApiError('VALIDATION_FAILED', 'The request is not valid HTTP.');
  }
}

/**
 * Fastify's `clientErrorHandler`: Node reports here the connections it cuts, among them a
 * request whose headers or body did not arrive within the configured timeouts. Answers once in
 * the one error shape, unless an answer has started already, then closes the connection.
 */
export function clientErrorHandler(
  this: FastifyInstance,
  error: ConnectionError,
  socket: Socket,
): void {
  // The client closed the connection: nothing to answer, and a request under way reports it.
  if (error.code === 'ECONNRESET' || error.code === 'HPE_INVALID_EOF_STATE' || socket.destroyed) {
    socket.destroy();
    return;
  }
  const apiError = apiErrorOf(error);
  this.log.info({ code: error.code }, `connection closed: ${apiError.message}`);
  // Node's own rule: never write a second status line into a response under way.
  const response = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (socket.writable && !response?.headersSent) {
    const body = JSON.stringify(errorBody(apiError));
    socket.write(
      `HTTP/1.1 ${apiError.statusCode} ${STATUS_CODES[apiError.statusCode]}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
