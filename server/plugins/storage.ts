import { mkdir } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { PageTokens } from '../domain/page-token';
import { EmbeddedUserRepository } from '../repositories/user-repository';
import type { UserRepository } from '../repositories/user-repository-contract';
import type { PortfolioRepository } from '../repositories/portfolio-repository-contract';
import { EmbeddedPortfolioRepository } from '../storage/embedded-portfolio-repository';
import type { Database } from '../storage/postgres/database';
import { runExclusive } from '../storage/postgres/exclusive-job';
import type { SessionCache } from '../storage/postgres/session-cache';
import { Store, type StoreOptions } from '../storage/store';

declare module 'fastify' {
  interface FastifyInstance {
    /** The embedded store; null on PostgreSQL. */
    store: Store | null;
    /** The PostgreSQL database; null on the embedded store. */
    database: Database | null;
    userRepository: UserRepository;
    /** The one write path for portfolios (DESIGN §9). */
    portfolios: PortfolioRepository;
    /**
     * Runs a background job's pass unless another instance on the same database is running it
     * (answers undefined then); on the embedded store it always runs.
     */
    runJob: <T>(lock: number, job: () => Promise<T>) => Promise<T | undefined>;
    /** Signs and checks list page tokens; on PostgreSQL every instance accepts every token. */
    pageTokens: PageTokens;
  }
}

/**
 * Opens the storage and exposes the repositories over it: with `config.database`, PostgreSQL
 * (migrated on start; the data directory then holds only blobs, shared by every instance);
 * otherwise the embedded store in the data directory, under its lock.
 */
export default fp(
  async function storage(app: FastifyInstance, options: Omit<StoreOptions, 'log'>) {
    const url = app.config.database;
    if (url) {
      // Loaded only here: pg and node-pg-migrate are a tenth of an embedded start's module loading.
      const [{ openDatabase }, { PgPortfolioRepository }, { PgUserRepository }, { sharedSetting }] =
        await Promise.all([
          import('../storage/postgres/database'),
          import('../storage/postgres/pg-portfolio-repository'),
          import('../storage/postgres/pg-user-repository'),
          import('../storage/postgres/settings'),
        ]);
      await mkdir(options.dataDir, { recursive: true });
      const database = await openDatabase(url, {
        logger: { info: (msg) => app.log.info(msg), warn: (msg) => app.log.warn(msg) },
      });
      // Registered first, so it runs last: every other onClose hook may still query.
      app.addHook('onClose', async () => database.close());
      app.decorate('store', null);
      app.decorate('database', database);
      app.decorate(
        'userRepository',
        new PgUserRepository(database.pool, { cache: await sessionCache(app, database) }),
      );
      app.decorate(
        'portfolios',
        await PgPortfolioRepository.open(database.pool, {
          history: app.config.history.enabled,
          listPool: database.listPool,
        }),
      );
      app.decorate('runJob', (lock: number, job: () => Promise<unknown>) =>
        runExclusive(database.pool, lock, job),
      );
      const { secret } = await sharedSetting(database.pool, 'pageTokenSecret', () => ({
        secret: PageTokens.newSecret(),
      }));
      app.decorate('pageTokens', PageTokens.withSecret(secret));
      return;
    }
    const store = await Store.open({
      ...options,
      log: {
        info: (msg) => app.log.info(msg),
        warn: (msg) => app.log.warn(msg),
        error: (obj, msg) => app.log.error(obj, msg),
      },
    });
    // Runs after the server stopped accepting requests: pending writes finish before exit.
    app.addHook('onClose', async () => store.close());
    app.addHook('onListen', async () => {
      app.log.debug({ ms: store.openTimings }, 'Opened the library');
    });
    app.decorate('store', store);
    app.decorate('database', null);
    app.decorate('userRepository', new EmbeddedUserRepository(store));
    app.decorate(
      'portfolios',
      await EmbeddedPortfolioRepository.open(store, { history: app.config.history.enabled }),
    );
    app.decorate('runJob', (_lock: number, job: () => Promise<unknown>) => job());
    app.decorate('pageTokens', await PageTokens.open(store));
    collectOpeningGarbage(app);
  },
  { name: 'storage' },
);

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

/**
 * The sessions this instance answers from memory, kept right by the changes channel (DESIGN §12);
 * undefined when turned off (`auth.sessionCacheMs: 0`). Waits for the first LISTEN, so the cache
 * works from the first request (it stays bypassed if that fails, until a retry gets through).
 */
async function sessionCache(
  app: FastifyInstance,
  database: Database,
): Promise<SessionCache | undefined> {
  const { sessionCacheMs, sessionIdleMs } = app.config.auth;
  if (sessionCacheMs <= 0) return undefined;
  const { SessionCache } = await import('../storage/postgres/session-cache');
  const cache = new SessionCache({ ttlMs: sessionCacheMs, idleMs: sessionIdleMs });
  const changes = database.changes();
  changes.subscribe(cache);
  await changes.start();
  return cache;
}
