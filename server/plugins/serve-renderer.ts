import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

// Minimal version by the lead so the app builds; the renderer work replaces it.
export default fp(
  async function serveRenderer(app: FastifyInstance, options: { rendererDir: string | null }) {
    app.get('/', { schema: { hide: true } }, async (_request, reply) =>
      reply
        .type('text/html; charset=utf-8')
        .send(
          options.rendererDir
            ? '<!doctype html><title>Portfolio Manager</title><p>Loading…</p>'
            : '<!doctype html><title>Portfolio Manager</title><p>The UI is not built yet: run <code>npm run build:renderer</code>.</p>',
        ),
    );
  },
  { name: 'serve-renderer' },
);
