import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { UserRepository } from '../repositories/user-repository';
import { PortfolioRepository } from '../repositories/portfolio-repository';
import { Store, type StoreOptions } from '../storage/store';

declare module 'fastify' {
  interface FastifyInstance {
    store: Store;
    userRepository: UserRepository;
    portfolioRepository: PortfolioRepository;
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
    app.decorate('store', store);
    app.decorate('userRepository', new UserRepository(store));
    app.decorate('portfolioRepository', new PortfolioRepository(store));
    // Runs after the server stopped accepting requests: pending writes finish before exit.
    app.addHook('onClose', async () => store.close());
  },
  { name: 'storage' },
);
