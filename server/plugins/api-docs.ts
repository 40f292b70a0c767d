import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** Headers of every /docs answer: the page is same-origin only and never framed or sniffed. */
const DOCS_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

/**
 * swagger-ui's own CSP (it carries the hashes of the UI's inline script and style) made strict:
 * nothing from other origins (it allows any https: font and style, and the validator badge), no
 * upgrade to https (the server speaks http on loopback), no framing, forms to self only. The
 * UI's scripts inject <style> elements, so inline styles (never scripts) are allowed.
 */
export function strictDocsCsp(csp: string): string {
  return (
    csp
      .replace(/ https:/g, '')
      .replace(/ validator\.swagger\.io/g, '')
      .replace(/\s*upgrade-insecure-requests;?/, '')
      .replace("frame-ancestors 'self'", "frame-ancestors 'none'")
      .replace(/ +;/g, ';')
      .replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")
      .trim() + " connect-src 'self'; form-action 'self';"
  );
}

/** OpenAPI generated from the route schemas, served at /docs (UI) and /docs/json. */
export default fp(
  async function apiDocs(app: FastifyInstance, options: { version: string }) {
    await app.register(swagger, {
      openapi: {
        openapi: '3.0.3',
        info: {
          title: 'Portfolio Manager API',
          version: options.version,
          description:
            'The Portfolio Service Interface, as DESIGN.md resolves it. Sign in with POST /api/v1/appauth and ' +
            'send the sessionId as the Authorization header. Errors share one shape (ErrorBody).',
        },
        components: {
          securitySchemes: { session: { type: 'apiKey', in: 'header', name: 'Authorization' } },
        },
        tags: [
          { name: 'session', description: 'Sign in and out' },
          { name: 'portfolios', description: 'Portfolios' },
          { name: 'files', description: 'Cover, drafting process and additional documents' },
          { name: 'history', description: 'Kept revisions, restore, and the change feed' },
          { name: 'trash', description: 'Deleted portfolios: list, restore, purge' },
          { name: 'users', description: 'User management (admin)' },
        ],
      },
    });
    // Hooked here rather than through swagger-ui's uiHooks, which miss its static files.
    app.addHook('onRequest', (request, reply, done) => {
      if (request.url === '/docs' || request.url.startsWith('/docs/'))
        void reply.headers(DOCS_HEADERS);
      done();
    });
    await app.register(swaggerUi, {
      routePrefix: '/docs',
      // No validator badge: it would load an image from validator.swagger.io.
      uiConfig: { docExpansion: 'list', validatorUrl: null },
      staticCSP: true,
      transformStaticCSP: strictDocsCsp,
    });
  },
  { name: 'api-docs' },
);
