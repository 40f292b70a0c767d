/**
 * `POST/GET /api/v1/backups` and friends (DESIGN §11) on the real server over real HTTP, on the
 * run's backend: a backup taken while clients write holds every portfolio as of one seq.
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBackupDump } from '../../server/backup/read-backup';
import type { LibraryDump } from '../../server/storage/library-transfer';
import { expectError } from '../helpers/error-body';
import { fixtures, uploadMultipart } from '../helpers/file-fixtures';
import {
  makeTempDir,
  portfolioBody,
  startTestServer,
  type TestServer,
} from '../helpers/test-server';

describe('backups API', () => {
  let server: TestServer;
  let target: string;
  let editor: string;

  beforeAll(async () => {
    target = await makeTempDir('portfolio-api-backups-');
    server = await startTestServer({ backups: { target, intervalMs: 0 } });
    editor = await server.userSession('editor1', 'editor', ['*']);
    for (const id of ['b-1', 'b-2', 'b-3']) {
      const created = await server.request('POST', '/api/v1/portfolio', {
        body: portfolioBody({ portfolioId: id, projectTitle: `Title ${id}` }),
      });
      expect(created.status).toBe(201);
    }
    await uploadMultipart(server, '/api/v1/portfolio/b-1/cover', await fixtures.jpeg());
  });

  afterAll(async () => {
    await server.close();
    await rm(target, { recursive: true, force: true });
  });

  it('is for admins only, and says 403 before looking at the body', async () => {
    for (const [method, path] of [
      ['POST', '/api/v1/backups'],
      ['GET', '/api/v1/backups'],
      ['GET', '/api/v1/backups/settings'],
      ['POST', '/api/v1/backups/backup-20260101T000000Z-abcd/verify'],
    ]) {
      const answer = await server.request(method!, path!, { session: editor });
      expectError(answer, 403, 'FORBIDDEN');
    }
    const bad = await server.request('PUT', '/api/v1/backups/settings', {
      session: editor,
      body: { target: 42 },
    });
    expect(bad.status).toBe(403);
    expect((await server.request('GET', '/api/v1/backups', { session: null })).status).toBe(401);
  });

  it('backs up now (201 with the backup), lists it, and verifies it whole', async () => {
    const created = await server.request('POST', '/api/v1/backups');
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      status: 'done',
      path: join(target, created.body.backupId),
    });
    expect(created.body.seq).toBeGreaterThan(0);
    expect(created.body.sizeBytes).toBeGreaterThan(0);

    const listed = await server.request('GET', '/api/v1/backups');
    expect(listed.status).toBe(200);
    expect(listed.body.backups[0]).toEqual(created.body);

    const verified = await server.request(
      'POST',
      `/api/v1/backups/${created.body.backupId}/verify`,
    );
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ whole: true, problems: [] });
    expect(verified.body.files).toBeGreaterThan(6);

    const missing = await server.request(
      'POST',
      '/api/v1/backups/backup-20200101T000000Z-0000/verify',
    );
    expectError(missing, 404, 'BACKUP_NOT_FOUND');
  });

  it('runs one backup at a time: a second while one runs is 409 in the one error shape', async () => {
    // Hold the first backup at its read of the library, so it is surely running meanwhile.
    const backend = server.app.backend;
    const original = backend.dumpLibrary.bind(backend);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    backend.dumpLibrary = async () => {
      await gate;
      return original();
    };
    try {
      const first = server.request('POST', '/api/v1/backups');
      await expect.poll(() => server.app.backups.running).toBeDefined();
      const second = await server.request('POST', '/api/v1/backups');
      expectError(second, 409, 'BACKUP_RUNNING');
      const listed = await server.request('GET', '/api/v1/backups');
      expect(listed.body.backups[0]).toMatchObject({ status: 'running' });
      open();
      expect([201, 202]).toContain((await first).status);
      await server.app.backups.idle();
    } finally {
      backend.dumpLibrary = original;
    }
  });

  it('takes one consistent point while 20 clients write: one seq explains every portfolio', async () => {
    let writing = true;
    const writer = async (client: number) => {
      let round = 0;
      while (writing) {
        const id = `b-${(client % 3) + 1}`;
        const current = await server.request('GET', `/api/v1/portfolio/${id}`);
        await server.request('PUT', `/api/v1/portfolio/${id}`, {
          body: {
            projectTitle: `client ${client} round ${round++}`,
            revision: current.body.revision,
          },
        });
        await server.request('POST', '/api/v1/portfolio', {
          body: portfolioBody({ portfolioId: `w-${client}-${round}` }),
        });
      }
    };
    const writers = Array.from({ length: 20 }, (_, client) => writer(client));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const created = await server.request('POST', '/api/v1/backups');
    await new Promise((resolve) => setTimeout(resolve, 200));
    writing = false;
    await Promise.all(writers);
    await server.app.backups.idle();
    expect([201, 202]).toContain(created.status);
    const backupId: string = created.body.backupId;

    const backup = await readBackupDump(join(target, backupId));
    const now: LibraryDump = await server.app.backend.dumpLibrary();
    const seq = backup.library.seq;
    expect(now.library.seq).toBeGreaterThan(seq); // writes went on after the backup's point
    // Every revision committed up to `seq` is in the backup, and none after it.
    const key = (entry: { portfolioId: string; revision: number }) =>
      `${entry.portfolioId}#${entry.revision}`;
    const expected = now.revisions
      .filter((entry) => entry.seq <= seq)
      .map(key)
      .sort();
    expect(backup.revisions.map(key).sort()).toEqual(expected);
    // Each portfolio in it is as it was at its latest revision up to `seq`.
    const latest = new Map<string, number>();
    for (const entry of now.revisions)
      if (entry.seq <= seq && entry.revision > (latest.get(entry.portfolioId) ?? 0))
        latest.set(entry.portfolioId, entry.revision);
    expect(backup.portfolios).toHaveLength(latest.size);
    for (const record of backup.portfolios) {
      expect(record.seq).toBeLessThanOrEqual(seq);
      expect(record.revision).toBe(latest.get(record.portfolioId));
    }
  });

  it('keeps settings from the API: a full path, hours and how many to keep', async () => {
    const relative = await server.request('PUT', '/api/v1/backups/settings', {
      body: { target: 'backups', intervalHours: 24, keep: 7 },
    });
    expectError(relative, 400, 'VALIDATION_FAILED');

    const put = await server.request('PUT', '/api/v1/backups/settings', {
      body: { target, intervalHours: 0, keep: 1 },
    });
    expect(put.status).toBe(200);
    expect((await server.request('GET', '/api/v1/backups/settings')).body).toEqual({
      target,
      intervalHours: 0,
      keep: 1,
    });
    // Retention from then on: one backup kept, the blobs only older ones had removed with them.
    expect((await server.request('POST', '/api/v1/backups')).status).toBe(201);
    const names = (await readdir(target)).filter((name) => name.startsWith('backup-'));
    expect(names).toHaveLength(1);
  });

  it('backs up on schedule when the newest backup is older than the interval, not before', async () => {
    expect(await server.app.backups.scheduled()).toBe(false); // the schedule is off (0 hours)
    const fresh = await makeTempDir('portfolio-scheduled-backups-');
    try {
      const put = await server.request('PUT', '/api/v1/backups/settings', {
        body: { target: fresh, intervalHours: 1, keep: 7 },
      });
      expect(put.status).toBe(200);
      expect(await server.app.backups.scheduled()).toBe(true); // none yet: due
      expect(await server.app.backups.scheduled()).toBe(false); // one made just now
      const listed = await server.request('GET', '/api/v1/backups');
      expect(
        listed.body.backups.filter((b: { status: string }) => b.status === 'done'),
      ).toHaveLength(1);
    } finally {
      await rm(fresh, { recursive: true, force: true });
    }
  });
});
