import { mkdir } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { PageTokens } from '../domain/page-token';
import type { PortfolioRepository } from '../repositories/portfolio-repository-contract';
import type { StorageBackend } from '../repositories/storage-backend';
import type { UserRepository } from '../repositories/user-repository-contract';
import { EmbeddedBackend } from '../storage/embedded/embedded-backend';
import type { StoreOptions } from '../storage/embedded/store';

declare module 'fastify' {
  interface FastifyInstance {
    /** Where everything is kept: the one storage seam (DESIGN §12). */
    backend: StorageBackend;
    /** `backend.users`. */
    userRepository: UserRepository;
    /** `backend.portfolios`: written only by PortfolioService (DESIGN §9). */
    portfolios: PortfolioRepository;
    /** Signs and checks list page tokens; every instance on a backend accepts every token. */
    pageTokens: PageTokens;
  }
}

/**
 * Opens the backend: with `config.database`, PostgreSQL (migrated on start; the data directory
 * then holds only blobs, shared by every instance); otherwise the embedded store in the data
 * directory, under its lock. Nothing registered after this asks which one it is.
 */
export default fp(
  async function storage(app: FastifyInstance, options: Omit<StoreOptions, 'log'>) {
    const backend = await openBackend(app, options);
    // Registered first, so it runs last: every other onClose hook may still use the storage, and
    // pending writes finish before exit.
    app.addHook('onClose', async () => backend.close());
    app.decorate('backend', backend);
    app.decorate('userRepository', backend.users);
    app.decorate('portfolios', backend.portfolios);
    const { secret } = await backend.settings.shared('pageTokenSecret', () => ({
      secret: PageTokens.newSecret(),
    }));
    app.decorate('pageTokens', PageTokens.withSecret(secret));
    if (backend instanceof EmbeddedBackend) {
      app.addHook('onListen', async () => {
        app.log.debug({ ms: backend.store.openTimings }, 'Opened the library');
      });
      collectOpeningGarbage(app);
    }
  },
  { name: 'storage' },
);

async function openBackend(
  app: FastifyInstance,
  options: Omit<StoreOptions, 'log'>,
): Promise<StorageBackend> {
  const url = app.config.database;
  const history = app.config.history.enabled;
  if (url) {
    // Loaded only here: pg and node-pg-migrate are a tenth of an embedded start's module loading.
    const { PostgresBackend } = await import('../storage/postgres/postgres-backend');
    await mkdir(options.dataDir, { recursive: true });
    return PostgresBackend.open(url, {
      logger: { info: (msg) => app.log.info(msg), warn: (msg) => app.log.warn(msg) },
      history,
      sessionCacheMs: app.config.auth.sessionCacheMs,
      sessionIdleMs: app.config.auth.sessionIdleMs,
    });
  }
  return EmbeddedBackend.open({
    ...options,
    history,
    log: {
      info: (msg) => app.log.info(msg),
      warn: (msg) => app.log.warn(msg),
      error: (obj, msg) => app.log.error(obj, msg),
    },
  });
}

/** How long the server must go without a request before the collection below runs. */
const QUIET_MS = 1000;

/**
 * Opening parsed the whole snapshot (over 100 MB of text at 100k portfolios), garbage once the
 * maps hold the records; V8 frees it only at its next full collection, which may be far off, and
 * until then it stays resident (at 100k about 100 MB of RSS, which then stays the high-water mark
 * under load). With --expose-gc (`npm run serve` passes it) one full collection runs after
 * listening, at the first second without a request: it pauses the process for a few hundred ms at
 * 100k, so it waits for a quiet moment and does not delay the first requests. Without the flag
 * (the desktop app, tests) nothing is collected early.
 */
function collectOpeningGarbage(app: FastifyInstance): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return;
  let lastRequest = performance.now();
  let collected = false;
  app.addHook('onRequest', (_request, _reply, done) => {
    if (!collected) lastRequest = performance.now();
    done();
  });
  app.addHook('onListen', async () => {
    const check = () => {
      const quietFor = performance.now() - lastRequest;
      if (quietFor < QUIET_MS) {
        setTimeout(check, QUIET_MS - quietFor).unref();
        return;
      }
      collected = true;
      gc();
    };
    setTimeout(check, QUIET_MS).unref();
  });
}
