import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readSnapshotDocument } from '../../server/storage/embedded/snapshot-file';
import { SCHEMA_VERSION } from '../../server/storage/embedded/migrations';
import { embeddedStore, makeTempDir, startTestServer } from '../helpers/test-server';

describe('data layout versions', () => {
  let dataDir = '';
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  it('refuses a database written by a newer build, with a clear error, touching nothing', async () => {
    dataDir = await makeTempDir('portfolio-migrate-');
    const newer = JSON.stringify({
      version: SCHEMA_VERSION + 1,
      journalSeq: 0,
      collections: { portfolios: { x: { portfolioId: 'x' } } },
    });
    await writeFile(join(dataDir, 'db.json'), newer);

    await expect(startTestServer({ dataDir })).rejects.toThrow(
      `The database was written by a newer Portfolio Manager (data version ${SCHEMA_VERSION + 1}; this build reads up to ${SCHEMA_VERSION}).`,
    );
    expect(await readFile(join(dataDir, 'db.json'), 'utf8')).toBe(newer);
    // The lock was released: a second attempt fails for the same reason, not "in use".
    await expect(startTestServer({ dataDir })).rejects.toThrow(/newer Portfolio Manager/);
    expect((await readdir(dataDir)).filter((name) => name.startsWith('db.json'))).toEqual([
      'db.json',
    ]);
  });

  it('opens a current-version data directory with its records as they were', async () => {
    const first = await startTestServer();
    dataDir = first.dataDir;
    const created = await first.request('POST', '/api/v1/portfolio', {
      body: { memberBarcode: 'M1', category: 'Art', projectTitle: 'Kept', projectDetail: 'x' },
    });
    await embeddedStore(first.app).compactNow();
    await first.stop();
    const snapshot = (await readSnapshotDocument(join(dataDir, 'db.json'))) as any;
    expect(snapshot.version).toBe(SCHEMA_VERSION);

    const second = await startTestServer({ dataDir });
    try {
      const detail = await second.request('GET', `/api/v1/portfolio/${created.body.portfolioId}`);
      expect(detail.body.projectTitle).toBe('Kept');
    } finally {
      await second.stop();
    }
  });
});
