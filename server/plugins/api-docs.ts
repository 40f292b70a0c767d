import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import {
  assertOperationId,
  documentRoute,
  extractComponents,
  type RouteInfo,
} from '../openapi/document';

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

/**
 * OpenAPI 3.1 generated from the route schemas, served at /docs (UI) and /docs/json; see
 * server/openapi/document.ts for how. The renderer's client is generated from the same document
 * (`npm run api:generate`).
 */
export default fp(
  async function apiDocs(app: FastifyInstance, options: { version: string }) {
    // Fails the app's build, and so every test, for a route the document could not name.
    app.addHook('onRoute', (route) => assertOperationId(route as RouteInfo));
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Portfolio Manager API',
          version: options.version,
          description:
            'The Portfolio Service Interface, as DESIGN.md resolves it. Sign in with POST /api/v1/appauth and ' +
            'send the sessionId as the Authorization header (browsers may rely on the session cookie it ' +
            'also sets, the webSession scheme). Errors share one shape (ErrorBody); each error ' +
            'answer lists the codes it can carry.',
          license: { name: 'UNLICENSED', identifier: 'LicenseRef-Proprietary' },
        },
        servers: [{ url: '/', description: 'The server that serves this document' }],
        components: {
          securitySchemes: {
            session: {
              type: 'apiKey',
              in: 'header',
              name: 'Authorization',
              description: 'The sessionId from POST /api/v1/appauth, raw or as `Bearer <id>`',
            },
            webSession: {
              type: 'apiKey',
              in: 'cookie',
              name: 'portfolio_session',
              description:
                'The HttpOnly cookie POST /api/v1/appauth sets for browsers, named ' +
                '`portfolio_session_<port>` when the address has a port (browsers share cookies ' +
                'between the ports of a host), accepted when no ' +
                'Authorization header is sent. A POST, PUT, PATCH or DELETE authenticated by it ' +
                'alone must also carry `X-Portfolio-Client` (any non-empty value; the web UI ' +
                'sends `web`), or it is refused with 403 `CLIENT_HEADER_REQUIRED`: a form on ' +
                'another site cannot send that header. DELETE /api/v1/appauth clears it.',
            },
          },
        },
        tags: [
          { name: 'session', description: 'Sign in and out' },
          { name: 'portfolios', description: 'Portfolios' },
          { name: 'files', description: 'Cover, drafting process and additional documents' },
          { name: 'history', description: 'Kept revisions, restore, and the change feed' },
          { name: 'trash', description: 'Deleted portfolios: list, restore, purge' },
          { name: 'users', description: 'User management (admin)' },
          { name: 'sync', description: 'Sync between a replica and its hub (DESIGN §10)' },
          { name: 'backups', description: 'Backups of the library: now, listed, verified (admin)' },
          {
            name: 'showcase',
            description: 'The public showcase: on or off, title, intro, logo (admin)',
          },
          {
            name: 'transfer',
            description: 'Export to a ZIP or CSV, import of a ZIP (DESIGN §11)',
          },
          {
            name: 'sync-replica',
            description: 'This instance as a replica of a team server (hub): setup, rounds, status',
          },
        ],
      },
      // Every GET also answers HEAD (Fastify's exposeHeadRoutes): document those too.
      exposeHeadRoutes: true,
      transform: ({ route }) => documentRoute(route as RouteInfo),
      transformObject: (documents) => {
        if (!('openapiObject' in documents)) throw new Error('Only OpenAPI is generated.');
        return extractComponents(documents.openapiObject as Record<string, unknown>);
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
