import { createHash } from 'node:crypto';
import { cp, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { readSnapshotDocument } from '../../server/storage/embedded/snapshot-file';
import type { StoredFile } from '../../shared';
import { filesOf } from '../../server/domain/portfolio-files';
import { EmbeddedPortfolioRepository } from '../../server/storage/embedded/embedded-portfolio-repository';
import { SCHEMA_VERSION } from '../../server/storage/embedded/migrations';
import { UNKNOWN_AUTHOR } from '../../server/storage/embedded/portfolio-layout';
import { Store } from '../../server/storage/embedded/store';
import { makeTempDir, startTestServer } from '../helpers/test-server';

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));

/**
 * Data directories written by the release before data version 2 (see test/fixtures/README.md):
 * `data-v1` has a snapshot and a journal tail, `data-v1-journal` only a journal (that release
 * wrote its first snapshot once the journal had grown).
 */
const FIXTURE_DIRS = ['data-v1', 'data-v1-journal'];

/** What the fixture holds, in createdTime order: id and the revision it had. */
const PORTFOLIOS = [
  { portfolioId: 'lake-house', revision: 4, files: 2 },
  { portfolioId: 'city-loft', revision: 3, files: 2 },
  { portfolioId: 'garden', revision: 2, files: 0 },
];

async function copyFixture(name: string): Promise<string> {
  const dataDir = await makeTempDir('portfolio-v1-');
  await cp(join(FIXTURES, name), dataDir, { recursive: true });
  return dataDir;
}

describe.each(FIXTURE_DIRS)('migration from data version 1 (%s)', (fixture) => {
  let dataDir = '';
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  it('gives every record seq 1..n in createdTime order, unknown authors and a first revision', async () => {
    dataDir = await copyFixture(fixture);
    const store = await Store.open({ dataDir });
    try {
      const repository = await EmbeddedPortfolioRepository.open(store);
      for (const [index, expected] of PORTFOLIOS.entries()) {
        const record = (await repository.get(expected.portfolioId))!;
        expect(record).toMatchObject({
          revision: expected.revision,
          seq: index + 1,
          createdBy: UNKNOWN_AUTHOR,
          modifiedBy: UNKNOWN_AUTHOR,
        });
        expect(filesOf(record)).toHaveLength(expected.files);
        const history = await repository.revisions(expected.portfolioId, 10, null);
        expect(history.total).toBe(1);
        expect(history.items[0]).toMatchObject({
          revision: expected.revision,
          seq: index + 1,
          modifiedTime: record.modifiedTime,
          modifiedBy: UNKNOWN_AUTHOR,
          command: 'migrate',
          changedFields: [],
        });
        expect(history.items[0]!.snapshot).toBe(record);
      }
      expect(store.collection('portfolios').size).toBe(PORTFOLIOS.length);
      expect(store.collection('users').size).toBe(3);
      expect(store.collection('sessions').size).toBeGreaterThan(0);

      const feed = await repository.changesSince(0, 100);
      expect(feed.changes.map((change) => [change.seq, change.portfolioId])).toEqual(
        PORTFOLIOS.map((expected, index) => [index + 1, expected.portfolioId]),
      );
      expect(repository.libraryId).toMatch(/^[0-9a-f-]{36}$/);
      // The migrated layout is written at once, as version 2.
      const snapshot = (await readSnapshotDocument(join(dataDir, 'db.json'))) as any;
      expect(snapshot.version).toBe(SCHEMA_VERSION);
      expect(snapshot.collections.meta.library.seq).toBe(PORTFOLIOS.length);
      expect(Object.keys(snapshot.collections.revisions)).toHaveLength(PORTFOLIOS.length);
    } finally {
      await store.close();
    }
  });

  it('migrates once: a reopen keeps the seqs and the library id, and new changes continue', async () => {
    dataDir = await copyFixture(fixture);
    let store = await Store.open({ dataDir });
    const first = await EmbeddedPortfolioRepository.open(store);
    const libraryId = first.libraryId;
    await store.close();
    store = await Store.open({ dataDir });
    try {
      const repository = await EmbeddedPortfolioRepository.open(store);
      expect(repository.libraryId).toBe(libraryId);
      expect((await repository.get('garden'))!.seq).toBe(3);
      const garden = (await repository.get('garden'))!;
      const next = await repository.update(
        'garden',
        garden.revision,
        { ...garden, projectTitle: 'Winter garden', revision: garden.revision + 1 },
        { by: 'admin', time: Date.now(), command: 'save', changedFields: ['projectTitle'] },
      );
      expect(next).toMatchObject({ seq: 4, createdBy: UNKNOWN_AUTHOR, modifiedBy: 'admin' });
      const history = await repository.revisions('garden', 10, null);
      expect(history.items.map((item) => item.revision)).toEqual([3, 2]);
      expect(history.items[1]!.snapshot.projectTitle).toBe('Garden room');
    } finally {
      await store.close();
    }
  });

  it('serves the migrated portfolios and every file byte over HTTP', async () => {
    dataDir = await copyFixture(fixture);
    const server = await startTestServer({ dataDir });
    try {
      const editor = await server.signIn('edna', 'edna-password');
      for (const expected of PORTFOLIOS) {
        const detail = await server.request('GET', `/api/v1/portfolio/${expected.portfolioId}`);
        expect(detail.status).toBe(200);
        expect(detail.body.revision).toBe(expected.revision);
        const record = (await server.app.portfolios.get(expected.portfolioId))!;
        for (const file of filesOf(record)) {
          const response = await fetch(
            `${server.url}/api/v1/portfolio/${expected.portfolioId}/files/${file.fileId}`,
            { headers: { authorization: editor } },
          );
          expect(response.status).toBe(200);
          expect(sha256(Buffer.from(await response.arrayBuffer()))).toBe(file.sha256);
        }
      }
      // The start-up sweep kept every blob: each is referenced by a migrated record.
      expect(await blobFiles(dataDir)).toHaveLength(4);
    } finally {
      await server.close();
    }
  });
});

async function blobFiles(dataDir: string): Promise<string[]> {
  const root = join(dataDir, 'blobs');
  const shards = (await readdir(root)).filter((name) => /^[0-9a-f]{2}$/.test(name));
  return (await Promise.all(shards.map((shard) => readdir(join(root, shard))))).flat();
}

function sha256(bytes: Buffer): StoredFile['sha256'] {
  return createHash('sha256').update(bytes).digest('hex');
}
