import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { UserRepository } from '../repositories/user-repository';
import type { PortfolioRepository } from '../repositories/portfolio-repository-contract';
import { EmbeddedPortfolioRepository } from '../storage/embedded-portfolio-repository';
import { Store, type StoreOptions } from '../storage/store';

declare module 'fastify' {
  interface FastifyInstance {
    store: Store;
    userRepository: UserRepository;
    /** The one write path for portfolios (DESIGN §9). */
    portfolios: PortfolioRepository;
  }
}

/** Opens the data directory (taking its lock) and exposes the repositories over it. */
export default fp(
  async function storage(app: FastifyInstance, options: Omit<StoreOptions, 'log'>) {
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
    app.decorate('store', store);
    app.decorate('userRepository', new UserRepository(store));
    app.decorate(
      'portfolios',
      await EmbeddedPortfolioRepository.open(store, { history: app.config.history.enabled }),
    );
  },
  { name: 'storage' },
);
