import { describe, it } from 'vitest';
import { openDatabase, type Database } from '../../../server/storage/postgres/database';
import { PgShareRepository } from '../../../server/storage/postgres/pg-share-repository';
import { createTestDatabase, postgresUnavailable } from '../../helpers/postgres';
import { shareRepositoryContract, type ShareContractBackend } from './share-repository.contract';

const unavailable = await postgresUnavailable('ShareRepository contract: postgres');

if (unavailable) {
  describe('ShareRepository contract: postgres', () => {
    it.skip(`skipped: ${unavailable}`, () => {});
  });
} else {
  /** The PostgreSQL backend: a database of its own per test, reopened through a new pool. */
  shareRepositoryContract('postgres', async (): Promise<ShareContractBackend> => {
    const testDatabase = await createTestDatabase();
    let database: Database = await openDatabase(testDatabase.url);
    const backend: ShareContractBackend = {
      repository: new PgShareRepository(database.pool),
      async reopen() {
        await database.close();
        database = await openDatabase(testDatabase.url);
        backend.repository = new PgShareRepository(database.pool);
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
