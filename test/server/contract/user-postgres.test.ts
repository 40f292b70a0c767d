import { describe, it } from 'vitest';
import { openDatabase, type Database } from '../../../server/storage/postgres/database';
import { PgUserRepository } from '../../../server/storage/postgres/pg-user-repository';
import { SessionCache } from '../../../server/storage/postgres/session-cache';
import { createTestDatabase, postgresUnavailable } from '../../helpers/postgres';
import { userRepositoryContract, type UserContractBackend } from './user-repository.contract';

const unavailable = await postgresUnavailable('UserRepository contract: postgres');

/**
 * A repository on `database`; with `cached`, one that remembers every session it found until a
 * change of its own drops it: no time limit, a clock standing still, and no notices (the cache is
 * told it listens, but nothing is sent to it). The contract then shows that every change drops
 * what it must on its own instance before its promise resolves, without help from the notice.
 */
function repositoryOn(database: Database, cached: boolean): PgUserRepository {
  if (!cached) return new PgUserRepository(database.pool);
  const cache = new SessionCache({ ttlMs: Infinity, idleMs: Infinity, now: () => 0 });
  cache.listening();
  return new PgUserRepository(database.pool, { cache });
}

if (unavailable) {
  describe('UserRepository contract: postgres', () => {
    it.skip(`skipped: ${unavailable}`, () => {});
  });
} else {
  for (const cached of [false, true]) {
    /** The PostgreSQL backend: a database of its own per test, reopened through a new pool. */
    userRepositoryContract(
      cached ? 'postgres, with a session cache' : 'postgres',
      async (): Promise<UserContractBackend> => {
        const testDatabase = await createTestDatabase();
        let database: Database = await openDatabase(testDatabase.url);
        const backend: UserContractBackend = {
          repository: repositoryOn(database, cached),
          async reopen() {
            await database.close();
            database = await openDatabase(testDatabase.url);
            backend.repository = repositoryOn(database, cached);
            return backend.repository;
          },
          async destroy() {
            await database.close();
            await testDatabase.drop();
          },
        };
        return backend;
      },
    );
  }
}
