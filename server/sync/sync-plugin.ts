import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { SyncAppOptions } from '../config';
import { EmbeddedBackend } from '../storage/embedded/embedded-backend';
import { normalizeHubUrl } from './hub-client';
import { Replica } from './replica';
import { fileKeySecretBox } from './secret-box';

declare module 'fastify' {
  interface FastifyInstance {
    /** This instance as a replica of a hub (DESIGN §10); undefined on a backend without it. */
    replica: Replica | undefined;
  }
}

/** The replica engine over the embedded store, with background rounds once configured. */
export default fp(
  async function syncPlugin(app: FastifyInstance, options: SyncAppOptions) {
    // A replica keeps its sync state in the embedded store; a PostgreSQL deployment is a hub.
    const backend = app.backend;
    if (!(backend instanceof EmbeddedBackend)) {
      app.decorate('replica', undefined);
      return;
    }
    const replica = new Replica({
      store: backend.store,
      portfolios: backend.portfolios,
      blobs: app.blobStore,
      secretBox: options.secretBox ?? fileKeySecretBox(app.config.dataDir),
      log: {
        info: (msg) => app.log.info(msg),
        warn: (msg) => app.log.warn(msg),
        error: (obj, msg) => app.log.error(obj, msg),
      },
      debounceMs: options.debounceMs,
      intervalMs: options.intervalMs,
      maxBackoffMs: options.maxBackoffMs,
      pageSize: options.pageSize,
      batchSize: options.batchSize,
    });
    app.decorate('replica', replica);
    let retry: NodeJS.Timeout | undefined;
    // `--hub`: sign in once at start; a hub that is away is tried again (the server serves anyway).
    const configureFromFlags = async (hub: NonNullable<SyncAppOptions['hub']>) => {
      try {
        await replica.configure(hub.url, hub.username, hub.password);
      } catch (error) {
        app.log.error(`Sync: cannot set up the hub ${hub.url}: ${(error as Error).message}`);
        retry = setTimeout(() => void configureFromFlags(hub), 30_000);
        retry.unref();
      }
    };
    app.addHook('onReady', async () => {
      const hub = options.hub;
      if (hub && replica.config()?.hubUrl !== normalizeHubUrl(hub.url)) {
        await configureFromFlags(hub);
      }
      replica.start();
    });
    app.addHook('preClose', async () => {
      clearTimeout(retry);
      await replica.close();
    });
  },
  { name: 'sync', dependencies: ['storage'] },
);
