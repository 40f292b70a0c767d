import { afterEach, describe, expect, it } from 'vitest';
import type { StoredFile } from '../../../shared';
import { openDatabase, type Database } from '../../../server/storage/postgres/database';
import { PgPortfolioRepository } from '../../../server/storage/postgres/pg-portfolio-repository';
import { PortfolioIdTakenError } from '../../../server/repositories/portfolio-repository-contract';
import { portfolioRecord } from '../../helpers/portfolio-record';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../../helpers/postgres';
import { portfolioRepositoryContract, type ContractBackend } from './portfolio-repository.contract';

/** A stored file's metadata whose blob is `char` × 64. */
function file(char: string): StoredFile {
  return {
    fileId: `f-${char}`,
    originalFilename: `${char}.png`,
    fullFileExtension: 'png',
    mimeType: 'image/png',
    description: '',
    createdTime: 1,
    modifiedTime: 1,
    md5Checksum: 'd41d8cd98f00b204e9800998ecf8427e',
    sha256: char.repeat(64),
    size: 10,
    dimention: { width: 1, height: 1 },
  };
}

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

  describe('PgPortfolioRepository creates from two instances at once', () => {
    let testDatabase: TestDatabase;
    const databases: Database[] = [];
    afterEach(async () => {
      for (const database of databases.splice(0)) await database.close();
      await testDatabase?.drop();
    });

    it('creates each id once; the loser is told the id is taken, every other create stands', async () => {
      testDatabase = await createTestDatabase();
      for (let n = 0; n < 2; n++) databases.push(await openDatabase(testDatabase.url));
      const [one, two] = await Promise.all(
        databases.map((database) => PgPortfolioRepository.open(database.pool)),
      );
      const meta = { by: 'ann', time: 1, command: 'create', changedFields: [] };
      // Each instance creates 30 ids of its own and the same 30 shared ones, interleaved, so
      // groups of both hold creates that collide with the other instance's.
      const attempts = [one!, two!].flatMap((repo, which) =>
        Array.from({ length: 30 }, (_, n) => [
          repo.insert(portfolioRecord(`own-${which}-${n}`), meta),
          repo.insert(portfolioRecord(`shared-${n}`), meta),
        ]).flat(),
      );
      const results = await Promise.allSettled(attempts);
      const failures = results.filter((result) => result.status === 'rejected');
      expect(failures).toHaveLength(30);
      for (const failure of failures)
        expect((failure as PromiseRejectedResult).reason).toBeInstanceOf(PortfolioIdTakenError);
      const page = await one!.changesSince(0, 1000);
      expect(page.changes).toHaveLength(90);
      expect(page.changes.map((change) => change.seq)).toEqual(
        Array.from({ length: 90 }, (_, n) => n + 1),
      );
    });
  });

  describe('PgPortfolioRepository with history off', () => {
    let testDatabase: TestDatabase;
    let database: Database;
    afterEach(async () => {
      await database?.close();
      await testDatabase?.drop();
    });

    it('keeps only the current revision, and only the blobs it references', async () => {
      testDatabase = await createTestDatabase();
      database = await openDatabase(testDatabase.url);
      const repo = await PgPortfolioRepository.open(database.pool, { history: false });
      const meta = { by: 'ann', time: 1, command: 'file', changedFields: ['cover'] };
      const created = await repo.insert(portfolioRecord('p1', { cover: file('a') }), meta);
      const updated = await repo.update(
        'p1',
        1,
        { ...created, cover: file('b'), revision: 2 },
        meta,
      );
      const history = await repo.revisions('p1', 10, null);
      expect(history.items.map((item) => item.revision)).toEqual([2]);
      expect(history.items[0]!.snapshot).toEqual(updated);
      expect([...(await repo.referencedBlobs())]).toEqual(['b'.repeat(64)]);
      await repo.delete('p1', undefined, meta);
      const restored = await repo.restoreFromTrash('p1', { ...updated, revision: 3 }, meta);
      expect((await repo.revisions('p1', 10, null)).items).toEqual([
        expect.objectContaining({ revision: 3, snapshot: restored }),
      ]);
    });
  });
}
