import { PageTokens } from '../../server/domain/page-token';
import { describe, expect, it } from 'vitest';
import type { Authenticated } from '../../server/auth/session-service';
import type { UserRecord } from '../../server/storage/embedded/embedded-user-repository';
import { DeviceService } from '../../server/services/device-service';
import { PortfolioService } from '../../server/services/portfolio-service';
import { SyncService } from '../../server/services/sync-service';
import { openDatabase } from '../../server/storage/postgres/database';
import { PgPortfolioRepository } from '../../server/storage/postgres/pg-portfolio-repository';
import { PgUserRepository } from '../../server/storage/postgres/pg-user-repository';
import { createTestDatabase, postgresUnavailable } from '../helpers/postgres';
import { portfolioBody } from '../helpers/test-server';

const unavailable = await postgresUnavailable('SyncService on PostgreSQL');
const EDITOR: UserRecord = {
  username: 'pg-editor',
  role: 'editor',
  allowEdit: ['*'],
  passwordHash: 'unused',
  createdTime: 0,
  modifiedTime: 0,
};
const AUTH: Authenticated = {
  user: EDITOR,
  session: { username: EDITOR.username, createdDate: 0, expiredDate: 1e15, lastSeen: 0 },
  sessionHash: 'session-hash',
};

describe('SyncService on PostgreSQL', () => {
  it.skipIf(unavailable)(
    'merges, stores a conflict in the record, and answers a retried batch without a second change',
    async () => {
      const testDatabase = await createTestDatabase();
      const database = await openDatabase(testDatabase.url);
      try {
        const repository = await PgPortfolioRepository.open(database.pool);
        const portfolios = new PortfolioService({
          repository,
          blobs: { adopt: async () => () => {}, collect: () => {}, discard: async () => {} },
          limits: { filesPerList: 20 },
          pageTokens: PageTokens.withSecret(PageTokens.newSecret()),
        });
        const sync = new SyncService({
          repository,
          portfolios,
          devices: new DeviceService(new PgUserRepository(database.pool)),
          blobs: { has: async () => false, hold: () => () => {} },
          facts: async () => {
            throw new Error('no file in these mutations');
          },
          limits: { filesPerList: 20, fileBytes: 50_000_000 },
        });
        const created = await portfolios.create(EDITOR, portfolioBody({ projectTitle: 'Base' }));
        const id = created.portfolioId;
        await portfolios.update(EDITOR, id, portfolioBody({ projectTitle: 'Hub' }));
        const batch = [
          {
            mutationId: 'pg-1',
            portfolioId: id,
            op: 'update' as const,
            baseRevision: 1,
            fields: { projectTitle: 'Mine', readyToBuy: 'soon' },
          },
          {
            mutationId: 'pg-2',
            portfolioId: 'pg-new',
            op: 'create' as const,
            fields: portfolioBody(),
          },
        ];
        const first = await sync.applyMutations(AUTH, 'pg-replica', batch);
        expect(first.map((r) => r.status)).toEqual(['conflict', 'applied']);
        const stored = (await repository.get(id))!;
        expect(stored).toMatchObject({ projectTitle: 'Hub', readyToBuy: 'soon', revision: 3 });
        expect(stored.conflicts).toEqual([
          expect.objectContaining({
            conflictId: first[0]!.conflictId,
            fields: { projectTitle: { base: 'Base', current: 'Hub', theirs: 'Mine' } },
          }),
        ]);
        const feed = await repository.changesSince(0, 100);
        const again = await sync.applyMutations(AUTH, 'pg-replica', batch);
        expect(again).toEqual(first);
        expect(await repository.changesSince(0, 100)).toEqual(feed);
        expect((await sync.listConflicts(EDITOR, { pageSize: 10 })).total).toBe(1);
        const resolved = await sync.resolve(EDITOR, first[0]!.conflictId!, { keep: 'theirs' });
        expect(resolved).toMatchObject({ projectTitle: 'Mine', revision: 4 });
        expect(resolved.conflicts).toBeUndefined();
        expect((await repository.revision(id, 4))!.command).toBe('resolve-conflict');
      } finally {
        await database.close();
        await testDatabase.drop();
      }
    },
  );
});
