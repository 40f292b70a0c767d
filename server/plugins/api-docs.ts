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
            'send the sessionId as the Authorization header. Errors share one shape (ErrorBody); each error ' +
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
          },
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
      // Every GET also answers HEAD (Fastify's exposeHeadRoutes): document those too.
      exposeHeadRoutes: true,
      transform: ({ route }) => documentRoute(route as RouteInfo),
      transformObject: (documents) => {
        if (!('openapiObject' in documents)) throw new Error('Only OpenAPI is generated.');
        return extractComponents(documents.openapiObject as Record<string, unknown>);
      },
    });
    await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' } });
  },
  { name: 'api-docs' },
);
