import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/**
 * An answer sent before its request's body has fully arrived (a refusal by Content-Length or
 * from an image's header, a 401 to an upload, a blob the server has already) closes the
 * connection: otherwise Node would read the rest of that body on it before the next request,
 * and a browser that stopped sending it would wait for the keep-alive timeout (issue 24,
 * point 7). A body that arrived whole is dropped by Node, and the connection is kept.
 */
export default fp(
  async function closeUnreadBodies(app: FastifyInstance) {
    app.addHook('onSend', (request, reply, payload, done) => {
      if (!request.raw.complete) void reply.header('connection', 'close');
      done(null, payload);
    });
  },
  { name: 'close-unread-bodies' },
);
