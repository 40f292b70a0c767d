import type {
  JobName,
  SettingsStore,
  StorageBackend,
  StorageFailure,
} from '../../repositories/storage-backend';
import { exportEmbedded, LIBRARY_COLLECTIONS, type LibraryDump } from '../library-transfer';
import { EmbeddedPortfolioRepository } from './embedded-portfolio-repository';
import { EmbeddedShareRepository } from './embedded-share-repository';
import { EmbeddedUserRepository } from './embedded-user-repository';
import { Store, StorageWriteError, type StoreOptions } from './store';

export interface EmbeddedBackendOptions extends StoreOptions {
  /** Keep superseded revisions (default). */
  history?: boolean;
}

/**
 * The embedded backend (DESIGN §7): the lowdb snapshot and journal in one data directory, owned
 * by this one process (its lock). Nothing is shared, so every background job runs here, limits
 * are counted in memory, and a change is durable once the store is idle.
 */
export class EmbeddedBackend implements StorageBackend {
  readonly kind = 'embedded';
  readonly shared = false;
  readonly rateLimitStore = undefined;
  readonly settings: SettingsStore;
  readonly shares: EmbeddedShareRepository;

  private constructor(
    /** The store itself, for what only the embedded backend has: a sync replica's state. */
    readonly store: Store,
    readonly portfolios: EmbeddedPortfolioRepository,
    readonly users: EmbeddedUserRepository,
  ) {
    this.shares = new EmbeddedShareRepository(store);
    this.settings = {
      // Settings live in the store's `meta` collection, committed (durably) like any change.
      shared: async <T>(key: string, create: () => T): Promise<T> => {
        const existing = store.get<T>('meta', key);
        if (existing !== undefined) return existing;
        const value = create();
        await store.commit([{ type: 'put', col: 'meta', key, value }]);
        return value;
      },
      get: async <T>(key: string) => store.get<T>('meta', key),
      put: async <T>(key: string, value: T) => {
        await store.commit([{ type: 'put', col: 'meta', key, value }]);
      },
    };
  }

  static async open(options: EmbeddedBackendOptions): Promise<EmbeddedBackend> {
    const { history, ...storeOptions } = options;
    const store = await Store.open(storeOptions);
    try {
      const portfolios = await EmbeddedPortfolioRepository.open(store, { history });
      return new EmbeddedBackend(store, portfolios, new EmbeddedUserRepository(store));
    } catch (error) {
      await store.close();
      throw error;
    }
  }

  async dumpLibrary(): Promise<LibraryDump> {
    // One synchronous read of the durable state: the snapshot plus the journal up to one seq.
    return exportEmbedded(this.store.durableView(LIBRARY_COLLECTIONS));
  }

  runJob<T>(_job: JobName, pass: () => Promise<T>): Promise<T | undefined> {
    return pass();
  }

  durable(): Promise<void> {
    return this.store.idle();
  }

  async sweep(): Promise<void> {}

  failureOf(error: unknown): StorageFailure | undefined {
    return error instanceof StorageWriteError ? error : undefined;
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
