import { PageTokens } from '../../server/domain/page-token';
import { describe, expect, it } from 'vitest';
import { PortfolioService, type Caller } from '../../server/services/portfolio-service';
import { openDatabase } from '../../server/storage/postgres/database';
import { PgPortfolioRepository } from '../../server/storage/postgres/pg-portfolio-repository';
import { createTestDatabase, postgresUnavailable } from '../helpers/postgres';
import { portfolioBody } from '../helpers/test-server';

const unavailable = await postgresUnavailable('PortfolioService on PostgreSQL');
const ADMIN: Caller = { username: 'admin', role: 'admin', allowEdit: [] };

describe('PortfolioService on PostgreSQL', () => {
  it.skipIf(unavailable)(
    '30 concurrent unconditional updates of one portfolio all apply: none gets a 409',
    async () => {
      const testDatabase = await createTestDatabase();
      const database = await openDatabase(testDatabase.url);
      try {
        const service = new PortfolioService({
          repository: await PgPortfolioRepository.open(database.pool),
          blobs: { adopt: async () => () => {}, collect: () => {}, discard: async () => {} },
          limits: { filesPerList: 20 },
          pageTokens: PageTokens.withSecret(PageTokens.newSecret()),
        });
        const { portfolioId } = await service.create(ADMIN, portfolioBody());
        // The reads and compare-and-sets of these interleave over the pool's connections.
        const results = await Promise.allSettled(
          Array.from({ length: 30 }, (_, index) =>
            service.update(ADMIN, portfolioId, portfolioBody({ projectTitle: `Writer ${index}` })),
          ),
        );
        expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
        const revisions = results
          .map((result) => (result as PromiseFulfilledResult<{ revision: number }>).value.revision)
          .sort((a, b) => a - b);
        expect(revisions).toEqual(Array.from({ length: 30 }, (_, index) => index + 2));
        expect((await service.get(ADMIN, portfolioId)).revision).toBe(31);
      } finally {
        await database.close();
        await testDatabase.drop();
      }
    },
  );
});
