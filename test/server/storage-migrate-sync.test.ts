/**
 * `portfolio storage migrate` and a replica (issue 27, point 4): a real hub and a real replica
 * synced over real HTTP, then the replica's stopped data directory moved by the real command line.
 * To another data directory its hub link (address, account, sealed device token, checkpoint and
 * bases) and its history go along and it goes on syncing; to PostgreSQL, which cannot be a replica,
 * the move is refused in plain words with nothing written.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../server/storage/postgres/database';
import { killRunningClis, spawnCli } from '../helpers/cli-process';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../helpers/postgres';
import {
  makeTempDir,
  portfolioBody,
  startTestServer,
  type TestServer,
} from '../helpers/test-server';

const SUITE = 'portfolio storage migrate of a replica';
const unavailable = await postgresUnavailable(SUITE);

async function run(args: string[]) {
  const cli = spawnCli(['storage', 'migrate', ...args]);
  const { code } = await cli.exited;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

const revisionsOf = async (server: TestServer, id: string) =>
  (
    await server.request<{ revisions: { revision: number; command: string }[] }>(
      'GET',
      `/api/v1/portfolio/${id}/revisions`,
    )
  ).body;

describe.skipIf(unavailable)(SUITE, () => {
  const dirs: string[] = [];
  let hub: TestServer;
  let replicaDir: string;
  let history: unknown;

  beforeAll(async () => {
    hub = await startTestServer({ database: null });
    await hub.userSession('curator', 'editor', ['Interior']);
    const replica = await startTestServer({ database: null, sync: { intervalMs: 0 } });
    replicaDir = replica.dataDir;
    dirs.push(replicaDir);
    const linked = await replica.request('PUT', '/api/v1/sync/config', {
      body: { hubUrl: hub.url, username: 'curator', password: 'curator-password' },
    });
    expect(linked.status).toBe(200);
    const created = await replica.request('POST', '/api/v1/portfolio', {
      body: portfolioBody({ portfolioId: 'p-rep', projectTitle: 'Before the move' }),
    });
    expect(created.status).toBe(201);
    const edited = await replica.request('PUT', '/api/v1/portfolio/p-rep', {
      body: portfolioBody({ projectTitle: 'Edited before the move' }),
    });
    expect(edited.status).toBe(200);
    expect((await replica.request('POST', '/api/v1/sync/run')).status).toBe(200);
    history = await revisionsOf(replica, 'p-rep');
    await replica.stop();
  });

  afterAll(async () => {
    await killRunningClis();
    await hub?.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('refuses to move a replica to PostgreSQL, in plain words, writing nothing', async () => {
    const database: TestDatabase = await createTestDatabase();
    const files = await makeTempDir('portfolio-pg-files-');
    dirs.push(files);
    try {
      const refused = await run(['--from', replicaDir, '--to', database.url, '--data-dir', files]);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe('');
      const line = refused.stderr.trim();
      expect(line.split('\n')).toHaveLength(1);
      expect(line).toContain(`syncs with the team server ${hub.url} (as curator)`);
      expect(line).toMatch(/cannot sync with a team server; nothing was changed/);
      const opened = await openDatabase(database.url);
      try {
        const { rows } = await opened.pool.query<{ n: number }>(
          `SELECT (SELECT count(*) FROM portfolios) + (SELECT count(*) FROM users)
             + (SELECT count(*) FROM revisions) AS n`,
        );
        expect(Number(rows[0]!.n)).toBe(0);
      } finally {
        await opened.close();
      }
    } finally {
      await database.drop();
    }
  });

  it('moves a replica to another data directory with its history and hub link: it goes on syncing', async () => {
    const movedDir = await makeTempDir('portfolio-moved-replica-');
    dirs.push(movedDir);
    const moved = await run(['--from', replicaDir, '--to', movedDir]);
    expect(moved.stderr).toBe('');
    expect(moved.code).toBe(0);
    expect(moved.stdout).toContain(
      `The link to the team server ${hub.url} (as curator) was carried`,
    );

    const replica = await startTestServer({
      dataDir: movedDir,
      database: null,
      sync: { intervalMs: 0 },
    });
    try {
      const config = await replica.request('GET', '/api/v1/sync/config');
      expect(config.body).toMatchObject({ configured: true, hubUrl: hub.url, username: 'curator' });
      // History: every revision, as it was.
      expect(await revisionsOf(replica, 'p-rep')).toEqual(history);
      // Nothing pending after the move: the checkpoint and bases came along.
      const status = await replica.request('GET', '/api/v1/sync/status');
      expect(status.body.pending.changes).toBe(0);
      // The device token still opens the hub: an edit made after the move reaches it.
      const edited = await replica.request('PUT', '/api/v1/portfolio/p-rep', {
        body: portfolioBody({ projectTitle: 'After the move' }),
      });
      expect(edited.status).toBe(200);
      const round = await replica.request('POST', '/api/v1/sync/run');
      expect(round.status).toBe(200);
      const onHub = await hub.request('GET', '/api/v1/portfolio/p-rep');
      expect(onHub.body.projectTitle).toBe('After the move');
    } finally {
      await replica.stop();
    }
  });

  it('a replaced target keeps no hub link of its own when the source has none', async () => {
    const plain = await startTestServer({ database: null });
    dirs.push(plain.dataDir);
    await plain.stop();
    const target = await makeTempDir('portfolio-replaced-');
    dirs.push(target);
    expect((await run(['--from', replicaDir, '--to', target])).code).toBe(0);
    const replaced = await run(['--from', plain.dataDir, '--to', target, '--force']);
    expect(replaced.stderr).toBe('');
    expect(replaced.code).toBe(0);
    expect(replaced.stdout).toContain('The library was linked to no team server.');
    const server = await startTestServer({ dataDir: target, database: null });
    try {
      const config = await server.request('GET', '/api/v1/sync/config');
      expect(config.body).toMatchObject({ configured: false });
    } finally {
      await server.stop();
    }
  });
});
