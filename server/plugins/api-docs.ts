import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

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
    await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' } });
  },
  { name: 'api-docs' },
);
