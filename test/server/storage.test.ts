import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readSnapshotDocument } from '../../server/storage/embedded/snapshot-file';
import { buildApp } from '../../server/app';
import { DataDirInUseError, LOCK_FILE_NAME } from '../../server/storage/embedded/data-dir-lock';
import { SCHEMA_VERSION } from '../../server/storage/embedded/migrations';
import {
  embeddedStore,
  ADMIN,
  FAST_AUTH,
  portfolioBody,
  startTestServer,
  type TestServer,
  embeddedOnly,
} from '../helpers/test-server';

const servers: TestServer[] = [];
async function server(options: Parameters<typeof startTestServer>[0] = {}) {
  const started = await startTestServer(options);
  servers.push(started);
  return started;
}
afterEach(async () => {
  // Stop every server, then remove each data directory once.
  await Promise.all(servers.map((s) => s.stop()));
  const dirs = new Set(servers.splice(0).map((s) => s.dataDir));
  await Promise.all([...dirs].map((dir) => rm(dir, { recursive: true, force: true })));
});

/** Creates portfolios, users and state changes worth checking after a restart. */
async function populate(s: TestServer, prefix: string) {
  const editor = await s.userSession(`${prefix}.editor`, 'editor', ['Art']);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const created = await s.request('POST', '/api/v1/portfolio', {
      body: portfolioBody({
        portfolioId: `${prefix}-${i}`,
        category: 'Art',
        generalTag: [`t${i}`],
      }),
      session: editor,
    });
    expect(created.status).toBe(201);
    ids.push(created.body.portfolioId);
  }
  await s.request('PUT', `/api/v1/portfolio/${ids[0]}`, {
    body: portfolioBody({
      category: 'Art',
      command: 'publish',
      staffPick: true,
      projectTitle: 'Edited',
    }),
  });
  return { editor, ids };
}

async function snapshotOf(s: TestServer, ids: string[]) {
  return Promise.all(
    ids.map(async (id) => (await s.request('GET', `/api/v1/portfolio/${id}`)).body),
  );
}

describe('durability across restarts', () => {
  embeddedOnly('the data-directory lock, checked at its end')(
    'keeps portfolios, users and sessions when restarted on the same data dir',
    async () => {
      const first = await server();
      const { editor, ids } = await populate(first, 'keep');
      const before = await snapshotOf(first, ids);
      const users = (await first.request('GET', '/api/v1/users')).body;
      await first.stop();

      const second = await server({ dataDir: first.dataDir });
      expect(await snapshotOf(second, ids)).toEqual(before);
      expect(before[0]).toMatchObject({
        projectTitle: 'Edited',
        published: true,
        staffPick: true,
        revision: 2,
      });
      expect((await second.request('GET', '/api/v1/users')).body).toEqual(users);
      // Sessions survive too: the editor's session from before the restart still works.
      const me = await second.request('GET', '/api/v1/appauth', { session: editor });
      expect(me.status).toBe(200);
      expect(me.body.user.username).toBe('keep.editor');
      // The first admin is not re-created with the bootstrap password of a later start.
      const third = await buildApp({
        dataDir: first.dataDir,
        bootstrapAdmin: { username: 'other', password: 'other-password' },
        auth: FAST_AUTH,
      }).catch((error: unknown) => error);
      expect(third).toBeInstanceOf(DataDirInUseError); // second still owns it
    },
  );

  embeddedOnly('the journal and snapshots of the embedded store')(
    'keeps everything across snapshots and restarts (journal + db.json)',
    async () => {
      const first = await server();
      const a = await populate(first, 'a');
      await embeddedStore(first.app).compactNow();
      const b = await populate(first, 'b'); // journal only
      const ids = [...a.ids, ...b.ids];
      const before = await snapshotOf(first, ids);
      await first.stop();
      const db = (await readSnapshotDocument(join(first.dataDir, 'db.json'))) as any;
      expect(db.version).toBe(SCHEMA_VERSION);
      expect(Object.keys(db.collections.portfolios).sort()).toEqual([...a.ids].sort());

      const second = await server({ dataDir: first.dataDir });
      expect(await snapshotOf(second, ids)).toEqual(before);
      await embeddedStore(second.app).compactNow();
      await second.stop();
      const third = await server({ dataDir: first.dataDir });
      expect(await snapshotOf(third, ids)).toEqual(before);
    },
  );

  embeddedOnly('the journal and snapshots of the embedded store')(
    'recovers a truncated db.json from the previous generation, losing nothing',
    async () => {
      const first = await server();
      const a = await populate(first, 'gen1');
      await embeddedStore(first.app).compactNow();
      const b = await populate(first, 'gen2');
      await embeddedStore(first.app).compactNow();
      const c = await populate(first, 'tail'); // only in the journal
      const ids = [...a.ids, ...b.ids, ...c.ids];
      const before = await snapshotOf(first, ids);
      await first.stop();

      const dbPath = join(first.dataDir, 'db.json');
      await truncate(dbPath, Math.floor((await stat(dbPath)).size / 3));
      const second = await server({ dataDir: first.dataDir });
      expect(await snapshotOf(second, ids)).toEqual(before);
      // Sign-in and writes work on the recovered database.
      expect(await second.signIn('gen2.editor', 'gen2.editor-password')).toBeTruthy();
      const created = await second.request('POST', '/api/v1/portfolio', { body: portfolioBody() });
      expect(created.status).toBe(201);
      const names = await readdir(first.dataDir);
      expect(names.some((name) => name.startsWith('db.json.corrupt-'))).toBe(true);
    },
  );

  embeddedOnly('the data-directory lock')(
    'refuses a second server on a used data dir; the first keeps serving',
    async () => {
      const first = await server();
      const lockBefore = await readFile(join(first.dataDir, LOCK_FILE_NAME), 'utf8');
      const error = await buildApp({ dataDir: first.dataDir, auth: FAST_AUTH }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(DataDirInUseError);
      expect((error as Error).message).toContain('in use');
      expect(await readFile(join(first.dataDir, LOCK_FILE_NAME), 'utf8')).toBe(lockBefore);
      const created = await first.request('POST', '/api/v1/portfolio', { body: portfolioBody() });
      expect(created.status).toBe(201);
    },
  );

  embeddedOnly('the data-directory lock')(
    'takes over the stale lock of a dead process and serves the data',
    async () => {
      const first = await server();
      const { ids } = await populate(first, 'stale');
      const before = await snapshotOf(first, ids);
      await first.stop();
      const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
      await writeFile(
        join(first.dataDir, LOCK_FILE_NAME),
        JSON.stringify({
          pid: Number(dead.stdout.toString()),
          hostname: hostname(),
          token: 't',
          startedAt: 1,
        }),
      );
      const second = await server({ dataDir: first.dataDir });
      expect(await snapshotOf(second, ids)).toEqual(before);
      expect(JSON.parse(await readFile(join(first.dataDir, LOCK_FILE_NAME), 'utf8')).pid).toBe(
        process.pid,
      );
      // Stopping releases the lock.
      await second.stop();
      expect(await readdir(first.dataDir)).not.toContain(LOCK_FILE_NAME);
    },
  );

  it('bootstraps the admin only on first start', async () => {
    const first = await server();
    await first.request('PUT', '/api/v1/users/admin', { body: { password: 'changed-password' } });
    await first.stop();
    const second = await server({
      dataDir: first.dataDir,
      bootstrapAdmin: { username: 'admin', password: 'changed-password' },
    });
    const old = await second.request('POST', '/api/v1/appauth', { body: ADMIN, session: null });
    expect(old.status).toBe(401);
    expect((await second.request('GET', '/api/v1/users')).body.total).toBe(1);
  });
});
