import { describe, it } from 'vitest';
import { openDatabase, type Database } from '../../../server/storage/postgres/database';
import { PgPortfolioRepository } from '../../../server/storage/postgres/pg-portfolio-repository';
import { createTestDatabase, postgresUnavailable } from '../../helpers/postgres';
import { portfolioRepositoryContract, type ContractBackend } from './portfolio-repository.contract';

const unavailable = await postgresUnavailable('PortfolioRepository contract: postgres');

if (unavailable) {
  describe('PortfolioRepository contract: postgres', () => {
    it.skip(`skipped: ${unavailable}`, () => {});
  });
} else {
  /** The PostgreSQL backend: a database of its own per test, reopened through a new pool. */
  portfolioRepositoryContract('postgres', async (): Promise<ContractBackend> => {
    const testDatabase = await createTestDatabase();
    let database: Database = await openDatabase(testDatabase.url);
    const backend: ContractBackend = {
      repository: await PgPortfolioRepository.open(database.pool),
      async reopen() {
        await database.close();
        database = await openDatabase(testDatabase.url);
        backend.repository = await PgPortfolioRepository.open(database.pool);
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
