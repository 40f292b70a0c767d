import { describe, it } from 'vitest';
import { openDatabase, type Database } from '../../../server/storage/postgres/database';
import { PgUserRepository } from '../../../server/storage/postgres/pg-user-repository';
import { createTestDatabase, postgresUnavailable } from '../../helpers/postgres';
import { userRepositoryContract, type UserContractBackend } from './user-repository.contract';

const unavailable = await postgresUnavailable('UserRepository contract: postgres');

if (unavailable) {
  describe('UserRepository contract: postgres', () => {
    it.skip(`skipped: ${unavailable}`, () => {});
  });
} else {
  /** The PostgreSQL backend: a database of its own per test, reopened through a new pool. */
  userRepositoryContract('postgres', async (): Promise<UserContractBackend> => {
    const testDatabase = await createTestDatabase();
    let database: Database = await openDatabase(testDatabase.url);
    const backend: UserContractBackend = {
      repository: new PgUserRepository(database.pool),
      async reopen() {
        await database.close();
        database = await openDatabase(testDatabase.url);
        backend.repository = new PgUserRepository(database.pool);
        return backend.repository;
      },
      async destroy() {
        await database.close();
        await testDatabase.drop();
      },
    };
    return backend;
  });
}
