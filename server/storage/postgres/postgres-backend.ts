import type {
  JobName,
  SettingsStore,
  StorageBackend,
  StorageFailure,
} from '../../repositories/storage-backend';
import { StorageUnavailableError } from '../../repositories/storage-backend';
import { exportPostgres, type LibraryDump } from '../library-transfer';
import { connectionFailure } from './database-errors';
import { openDatabase, type Database, type DatabaseLogger } from './database';
import { runExclusive } from './exclusive-job';
import { PgPortfolioRepository } from './pg-portfolio-repository';
import { pgRateLimitStore, pruneRateLimits } from './pg-rate-limit-store';
import { PgShareRepository } from './pg-share-repository';
import { PgUserRepository } from './pg-user-repository';
import type { SessionCache } from './session-cache';
import { sharedSetting } from './settings';

/** Advisory lock keys of the background jobs (another key space than the migration lock's). */
const JOB_LOCKS: Record<JobName, number> = {
  retention: 0x706d0001,
  sessionSweep: 0x706d0002,
  backup: 0x706d0003,
};

export interface PostgresBackendOptions {
  logger: DatabaseLogger;
  /** Keep superseded revisions (default). */
  history?: boolean;
  /** How long a session is answered from memory (0: always asked of the database). */
  sessionCacheMs: number;
  sessionIdleMs: number;
}

/**
 * The PostgreSQL backend (DESIGN §12): every instance behind a load balancer shares the
 * database, and the blob folder beside it. Background jobs take an advisory lock, rate limits
 * are counted in the database, and a change is durable once its transaction committed.
 */
export class PostgresBackend implements StorageBackend {
  readonly kind = 'postgres';
  readonly shared = true;
  readonly settings: SettingsStore;
  readonly rateLimitStore;
  readonly shares: PgShareRepository;

  private constructor(
    /** The database itself, for tools that work on it (migrate, backups). */
    readonly database: Database,
    readonly portfolios: PgPortfolioRepository,
    readonly users: PgUserRepository,
  ) {
    const pool = database.pool;
    this.shares = new PgShareRepository(pool);
    this.rateLimitStore = pgRateLimitStore(pool);
    this.settings = {
      shared: (key, create) => sharedSetting(pool, key, create),
      get: async <T>(key: string) => {
        const { rows } = await pool.query<{ value: T }>(
          'SELECT value FROM settings WHERE key = $1',
          [key],
        );
        return rows[0]?.value;
      },
      put: async <T>(key: string, value: T) => {
        await pool.query(
          `INSERT INTO settings (key, value) VALUES ($1, $2)
           ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
          [key, JSON.stringify(value)],
        );
      },
    };
  }

  static async open(url: string, options: PostgresBackendOptions): Promise<PostgresBackend> {
    const database = await openDatabase(url, { logger: options.logger });
    try {
      const users = new PgUserRepository(database.pool, {
        cache: await sessionCache(database, options),
      });
      const portfolios = await PgPortfolioRepository.open(database.pool, {
        history: options.history,
        listPool: database.listPool,
      });
      return new PostgresBackend(database, portfolios, users);
    } catch (error) {
      await database.close();
      throw error;
    }
  }

  /** One REPEATABLE READ transaction: every row as of one moment, while writes go on. */
  async dumpLibrary(): Promise<LibraryDump> {
    return exportPostgres(this.database.pool);
  }

  runJob<T>(job: JobName, pass: () => Promise<T>): Promise<T | undefined> {
    return runExclusive(this.database.pool, JOB_LOCKS[job], pass);
  }

  /** A change is acknowledged once its transaction committed: durable already. */
  async durable(): Promise<void> {}

  async sweep(): Promise<void> {
    await pruneRateLimits(this.database.pool);
  }

  failureOf(error: unknown): StorageFailure | undefined {
    const reason = connectionFailure(error);
    return reason === undefined ? undefined : new StorageUnavailableError(reason);
  }

  close(): Promise<void> {
    return this.database.close();
  }
}

/**
 * The sessions this instance answers from memory, kept right by the changes channel (DESIGN §12);
 * undefined when turned off (`sessionCacheMs: 0`). Waits for the first LISTEN, so the cache works
 * from the first request (it stays bypassed if that fails, until a retry gets through).
 */
async function sessionCache(
  database: Database,
  options: PostgresBackendOptions,
): Promise<SessionCache | undefined> {
  if (options.sessionCacheMs <= 0) return undefined;
  const { SessionCache } = await import('./session-cache');
  const cache = new SessionCache({ ttlMs: options.sessionCacheMs, idleMs: options.sessionIdleMs });
  const changes = database.changes();
  changes.subscribe(cache);
  await changes.start();
  return cache;
}
