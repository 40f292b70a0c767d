import multipart from '@fastify/multipart';
import rateLimit from '@fastify/rate-limit';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import packageJson from '../package.json' with { type: 'json' };
import { waitInWords } from '../shared';
import { resolveConfig, type AppOptions, type ResolvedConfig } from './config';
import { ApiError } from './errors';
import { clientErrorHandler } from './http/client-error';
import { frameworkErrors } from './http/framework-errors';
import apiDocs from './plugins/api-docs';
import auth from './plugins/auth';
import backups from './plugins/backups';
import blobStore from './plugins/blob-store';
import closeUnreadBodies from './plugins/close-unread-bodies';
import errorHandler from './plugins/error-handler';
import loopbackHost from './plugins/loopback-host';
import serveRenderer from './plugins/serve-renderer';
import showcase from './showcase/showcase-plugin';
import showcaseRoutes from './showcase/showcase-routes';
import showcaseSettingsRoutes from './routes/showcase-settings';
import storage from './plugins/storage';
import validation, { schemaCompilers } from './plugins/validation';
import authRoutes from './routes/auth';
import backupRoutes from './routes/backups';
import blobRoutes from './routes/blobs';
import transferRoutes from './routes/transfer';
import csvImportRoutes from './routes/csv-import';
import portfolioListRoutes from './routes/portfolio-list';
import changeRoutes from './routes/changes';
import deviceRoutes from './routes/devices';
import syncRoutes from './routes/sync';
import fileChangeRoutes from './routes/file-changes';
import fileDownloadRoutes from './routes/file-downloads';
import fileUploadRoutes from './routes/file-uploads';
import ingestRoutes from './routes/ingest';
import portfolioRoutes from './routes/portfolios';
import portfolioBulkRoutes from './routes/portfolio-bulk';
import revisionRoutes from './routes/revisions';
import sharePageRoutes from './routes/share-pages';
import shareRoutes from './routes/shares';
import trashRoutes from './routes/trash';
import syncControlRoutes from './routes/sync-control';
import userRoutes from './routes/users';
import {
  blobServicePlugin,
  transferServicePlugin,
  csvImportServicePlugin,
  portfolioServicePlugin,
  shareServicePlugin,
  syncServicePlugin,
  userServicePlugin,
} from './services/service-plugins';
import shellFacade from './shell-facade';
import syncPlugin from './sync/sync-plugin';

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
  const { requestMs, headersMs } = config.timeouts;
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: config.limits.bodyBytes,
    // A client trickling its headers or body is cut with 408 (see http/client-error.ts). Node
    // checks the deadlines every connectionsCheckingInterval (30 s by default): check often
    // enough that a deadline is kept to within a tenth.
    requestTimeout: requestMs,
    http: {
      requestTimeout: requestMs,
      headersTimeout: Math.min(headersMs, requestMs),
      connectionsCheckingInterval: Math.max(
        50,
        Math.min(1000, Math.min(headersMs, requestMs) / 10),
      ),
    },
    clientErrorHandler,
    frameworkErrors,
    // A path parameter of any length reaches its route, whose schema refuses it (400 in the one
    // shape, after the session check) rather than the router (a bare 414 or 404). The request
    // line is bounded anyway by Node's header limit (16 KB).
    routerOptions: { maxParamLength: 16 * 1024 },
    trustProxy: options.trustProxy ?? false,
    // Opening a large library (100k portfolios) on a busy machine took more than Fastify's
    // default 10 s, and the server then refused to start: a plugin may take as long as it needs.
    pluginTimeout: 0,
    schemaController: { compilersFactory: schemaCompilers },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.decorate('config', config);

  // External plugins and cross-cutting behaviour.
  await app.register(errorHandler);
  await app.register(closeUnreadBodies);
  await app.register(validation);
  await app.register(loopbackHost, { enabled: () => app.config.loopbackOnly });
  // A list's upload may carry a whole list's files, each with its description (DESIGN §16); one
  // file part more than that is left for the route to refuse in words.
  const filesPerUpload = config.limits.filesPerList + 1;
  await app.register(multipart, {
    limits: {
      fileSize: config.limits.fileBytes,
      files: filesPerUpload,
      fields: filesPerUpload + 5,
      fieldSize: 100_000,
    },
  });
  await app.register(apiDocs, { version: packageJson.version });

  // App services.
  await app.register(storage, { dataDir: config.dataDir, ...options.storage });
  // After the storage: on PostgreSQL the counts live in the database, shared by every instance.
  await app.register(rateLimit, {
    global: false,
    ...(app.backend.rateLimitStore && { store: app.backend.rateLimitStore }),
    errorResponseBuilder: (_request, context) =>
      new ApiError(
        'RATE_LIMITED',
        `Too many requests; try again in ${waitInWords(context.ttl / 1000)}.`,
      ),
  });
  await app.register(auth, { config: config.auth });
  await app.register(blobStore);
  await app.register(userServicePlugin);
  await app.register(portfolioServicePlugin);
  await app.register(shareServicePlugin);
  await app.register(syncServicePlugin);
  await app.register(blobServicePlugin);
  await app.register(transferServicePlugin, { version: packageJson.version });
  await app.register(csvImportServicePlugin);
  await app.register(shellFacade);
  await app.register(syncPlugin, options.sync ?? {});
  await app.register(backups);
  await app.register(showcase);

  // Routes.
  await app.register(authRoutes, { requestsPerMinute: config.auth.signInRequestsPerMinute });
  await app.register(userRoutes);
  await app.register(portfolioRoutes);
  await app.register(portfolioBulkRoutes);
  await app.register(fileUploadRoutes);
  await app.register(ingestRoutes);
  await app.register(fileChangeRoutes);
  await app.register(fileDownloadRoutes);
  await app.register(revisionRoutes);
  await app.register(trashRoutes);
  await app.register(changeRoutes);
  await app.register(syncControlRoutes);
  await app.register(deviceRoutes, { version: packageJson.version });
  await app.register(syncRoutes);
  await app.register(backupRoutes);
  await app.register(blobRoutes);
  await app.register(transferRoutes);
  await app.register(csvImportRoutes);
  await app.register(portfolioListRoutes);
  await app.register(shareRoutes);
  await app.register(sharePageRoutes, {
    requestsPerMinute: config.shares.pageRequestsPerMinute,
  });
  await app.register(showcaseSettingsRoutes);
  await app.register(showcaseRoutes, { requestsPerMinute: config.showcase.requestsPerMinute });
  await app.register(serveRenderer, { rendererDir: config.rendererDir });

  // Fastify closes the connections idle at close time and waits for the rest. A keep-alive
  // connection busy then would stay open after its answer until the client lets go (up to the
  // keep-alive timeout, 72 s), so close each one as soon as it becomes idle.
  let closeIdle: NodeJS.Timeout | undefined;
  app.addHook('preClose', async () => {
    closeIdle = setInterval(() => app.server.closeIdleConnections(), 50);
    closeIdle.unref();
  });
  app.addHook('onClose', async () => clearInterval(closeIdle));

  try {
    await app.ready();
    const created = await app.userService.bootstrapAdmin(options.bootstrapAdmin ?? {});
    if (created?.generatedPassword)
      options.onGeneratedAdminPassword?.({
        username: created.username,
        password: created.generatedPassword,
      });
    else if (created) options.onAdminCreated?.(created.username);
  } catch (error) {
    await app.close(); // releases the data directory
    throw error;
  }
  return app;
}
