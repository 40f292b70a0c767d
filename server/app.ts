import multipart from '@fastify/multipart';
import rateLimit from '@fastify/rate-limit';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import packageJson from '../package.json' with { type: 'json' };
import { resolveConfig, type AppOptions, type ResolvedConfig } from './config';
import { ApiError } from './errors';
import apiDocs from './plugins/api-docs';
import auth from './plugins/auth';
import errorHandler from './plugins/error-handler';
import loopbackHost from './plugins/loopback-host';
import serveRenderer from './plugins/serve-renderer';
import storage from './plugins/storage';
import validation from './plugins/validation';
import authRoutes from './routes/auth';
import portfolioRoutes from './routes/portfolios';
import userRoutes from './routes/users';

export type { AppOptions } from './config';

declare module 'fastify' {
  interface FastifyInstance {
    config: ResolvedConfig;
  }
}

/**
 * Builds the whole API without listening. The CLI, the Electron main process and the tests all
 * start the server through this one function. Registration order is fixed: external plugins,
 * then app services, then routes.
 */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const config = resolveConfig(options);
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: config.limits.bodyBytes,
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.decorate('config', config);

  // External plugins and cross-cutting behaviour.
  await app.register(errorHandler);
  await app.register(validation);
  await app.register(loopbackHost, { enabled: () => app.config.loopbackOnly });
  await app.register(rateLimit, {
    global: false,
    errorResponseBuilder: (_request, context) =>
      new ApiError(
        'RATE_LIMITED',
        `Too many requests; try again in ${Math.ceil(context.ttl / 1000)} s.`,
      ),
  });
  await app.register(multipart, {
    limits: { fileSize: config.limits.fileBytes, files: 1, fields: 5, fieldSize: 100_000 },
  });
  await app.register(apiDocs, { version: packageJson.version });

  // App services.
  await app.register(storage, { dataDir: config.dataDir, ...options.storage });
  await app.register(auth, { config: config.auth });

  // Routes.
  await app.register(authRoutes, { requestsPerMinute: config.auth.signInRequestsPerMinute });
  await app.register(userRoutes);
  await app.register(portfolioRoutes);
  await app.register(serveRenderer, { rendererDir: config.rendererDir });

  try {
    await app.ready();
    const generated = await app.userService.bootstrapAdmin(options.bootstrapAdmin ?? {});
    if (generated) options.onGeneratedAdminPassword?.(generated);
  } catch (error) {
    await app.close(); // releases the data directory
    throw error;
  }
  return app;
}
