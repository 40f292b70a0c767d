/**
 * A backup onto a full disk (DESIGN §11): refused with a clear error, nothing half kept. The
 * disk is the real file system; "full" is an injected ENOSPC on writes into the backup folder
 * once a number of bytes went in (the rest of the server writes as usual).
 */
import { readdir, rm, stat } from 'node:fs/promises';
import type * as FsPromises from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { listBackups } from '../../server/backup/read-backup';
import { blobsOf } from '../../server/storage/library-transfer';
import { expectError } from '../helpers/error-body';
import { fixtures, uploadMultipart } from '../helpers/file-fixtures';
import {
  makeTempDir,
  portfolioBody,
  startTestServer,
  type TestServer,
} from '../helpers/test-server';

const disk = vi.hoisted(() => ({ folder: '', freeBytes: Infinity }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof FsPromises>();
  const open = (async (...args: Parameters<typeof actual.open>) => {
    const handle = await actual.open(...args);
    if (!disk.folder || !String(args[0]).startsWith(disk.folder)) return handle;
    // Writes into the backup folder use up `freeBytes`; past it they fail as a full disk does.
    return {
      write: async (data: Uint8Array) => {
        if (data.length > disk.freeBytes)
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), {
            code: 'ENOSPC',
          });
        disk.freeBytes -= data.length;
        return handle.write(data);
      },
      sync: () => handle.sync(),
      close: () => handle.close(),
    };
  }) as typeof actual.open;
  return { ...actual, default: { ...actual, open }, open };
});

describe('a backup onto a full disk', () => {
  let server: TestServer;
  let target: string;

  beforeAll(async () => {
    target = await makeTempDir('portfolio-full-backups-');
    server = await startTestServer({ backups: { target, intervalMs: 0 } });
    for (const id of ['f-1', 'f-2']) {
      const created = await server.request('POST', '/api/v1/portfolio', {
        body: portfolioBody({ portfolioId: id }),
      });
      expect(created.status).toBe(201);
      await uploadMultipart(server, `/api/v1/portfolio/${id}/cover`, await fixtures.jpeg(64, 64));
    }
    disk.folder = target;
  });

  afterAll(async () => {
    disk.folder = '';
    await server.close();
    await rm(target, { recursive: true, force: true });
  });

  /** Bytes of every file the library refers to: a backup copies them before its records. */
  const fileBytes = async () => {
    const dump = await server.app.backend.dumpLibrary();
    let bytes = 0;
    for (const sha256 of blobsOf(dump))
      bytes += (await stat(server.app.blobStore.pathOf(sha256))).size;
    return bytes;
  };

  for (const [where, room] of [
    ['while copying files', async () => 100],
    ['while writing the records', async () => (await fileBytes()) + 50],
  ] as const) {
    it(`${where}: 507 DISK_FULL in words, no backup listed, no partial folder left`, async () => {
      await rm(target, { recursive: true, force: true });
      disk.freeBytes = await room();
      const answer = await server.request('POST', '/api/v1/backups');
      const body = expectError(answer, 507, 'DISK_FULL');
      expect(body.message).toMatch(/disk is full.*nothing was kept/);
      expect(await listBackups(target)).toEqual([]);
      expect((await readdir(target)).filter((name) => name !== 'blobs')).toEqual([]);
      for (const name of await readdir(join(target, 'blobs')))
        expect(name).toMatch(/^[0-9a-f]{64}$/);
      const listed = await server.request('GET', '/api/v1/backups');
      expect(listed.body.backups[0]).toMatchObject({ status: 'failed' });
      expect(listed.body.backups[0].error).toMatch(/disk is full/);
      // The server goes on answering and writing.
      const update = await server.request('PUT', '/api/v1/portfolio/f-1', {
        body: portfolioBody({ projectTitle: `after ${where}` }),
      });
      expect(update.status, JSON.stringify(update.body)).toBe(200);
    });
  }

  it('backs up whole once there is room again', async () => {
    disk.freeBytes = Infinity;
    const answer = await server.request('POST', '/api/v1/backups');
    expect(answer.status).toBe(201);
    expect(await listBackups(target)).toHaveLength(1);
    const verified = await server.request('POST', `/api/v1/backups/${answer.body.backupId}/verify`);
    expect(verified.body.whole).toBe(true);
  });
});
