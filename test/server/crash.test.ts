import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { LOCK_FILE_NAME } from '../../server/storage/embedded/data-dir-lock';
import { killRunningClis, spawnCli, type CliProcess } from '../helpers/cli-process';
import { ADMIN, makeTempDir, portfolioBody, startTestServer } from '../helpers/test-server';

/** Child processes start slowly on a busy machine. */
const SPAWN_TIMEOUT = 60_000;
const dirs: string[] = [];
afterEach(killRunningClis);
afterAll(async () => {
  await killRunningClis();
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** Starts the real CLI on a fresh data dir and signs in as the admin. */
async function startCli(): Promise<{
  cli: CliProcess;
  url: string;
  session: string;
  dataDir: string;
}> {
  const dataDir = await makeTempDir('portfolio-crash-');
  dirs.push(dataDir);
  const cli = spawnCli(['serve', '--port', '0', '--data-dir', dataDir], {
    PORTFOLIO_ADMIN_USERNAME: ADMIN.username,
    PORTFOLIO_ADMIN_PASSWORD: ADMIN.password,
    PORTFOLIO_LOG_LEVEL: 'warn',
  });
  const url = await cli.url();
  const response = await fetch(`${url}/api/v1/appauth`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ADMIN),
  });
  expect(response.status).toBe(200);
  const { sessionId } = (await response.json()) as { sessionId: string };
  return { cli, url, session: sessionId, dataDir };
}

/**
 * Fires `count` concurrent creates; calls `onAcknowledged(n)` as 201s arrive. Resolves with the
 * ids that got a 201 and how many requests failed (connection lost, or any other answer).
 */
async function createConcurrently(
  url: string,
  session: string,
  count: number,
  onAcknowledged: (acknowledged: number) => void,
): Promise<{ acknowledged: string[]; failed: number }> {
  const acknowledged: string[] = [];
  let failed = 0;
  await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const portfolioId = `crash-${i}`;
      try {
        const response = await fetch(`${url}/api/v1/portfolio`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: session },
          body: JSON.stringify(portfolioBody({ portfolioId, projectTitle: `Title ${i}` })),
        });
        const body = (await response.json()) as { portfolioId: string };
        if (response.status !== 201) throw new Error(`status ${response.status}`);
        expect(body.portfolioId).toBe(portfolioId);
        acknowledged.push(portfolioId);
        onAcknowledged(acknowledged.length);
      } catch {
        failed++;
      }
    }),
  );
  return { acknowledged, failed };
}

/** Restarts in-process on the data dir and checks every acknowledged create is readable. */
async function expectAllReadable(dataDir: string, acknowledged: string[]) {
  const server = await startTestServer({ dataDir });
  try {
    const missing: string[] = [];
    for (const id of acknowledged) {
      const response = await server.request('GET', `/api/v1/portfolio/${id}`);
      if (response.status !== 200) missing.push(id);
      else expect(response.body.projectTitle).toBe(`Title ${id.slice('crash-'.length)}`);
    }
    expect(missing).toEqual([]);
    // The database is usable: a new write goes through.
    const created = await server.request('POST', '/api/v1/portfolio', { body: portfolioBody() });
    expect(created.status).toBe(201);
  } finally {
    await server.stop();
  }
}

describe('crash safety of a real server process', { timeout: SPAWN_TIMEOUT }, () => {
  it('keeps every acknowledged create after kill -9 during concurrent creates', async () => {
    const { cli, url, session, dataDir } = await startCli();
    const lock = JSON.parse(await readFile(join(dataDir, LOCK_FILE_NAME), 'utf8'));
    expect(lock.pid).toBe(cli.child.pid); // we signal the server process itself

    let killed = false;
    const result = await createConcurrently(url, session, 200, (acknowledged) => {
      if (!killed && acknowledged >= 40) {
        killed = true;
        cli.child.kill('SIGKILL');
      }
    });
    const exit = await cli.exited;
    expect(exit.signal).toBe('SIGKILL');
    expect(result.acknowledged.length).toBeGreaterThanOrEqual(40);
    expect(result.acknowledged.length + result.failed).toBe(200);
    // The killed process left its lock behind; the restart takes it over.
    await expect(readFile(join(dataDir, LOCK_FILE_NAME), 'utf8')).resolves.toContain(
      String(cli.child.pid),
    );
    await expectAllReadable(dataDir, result.acknowledged);
  });

  it('finishes pending writes on SIGTERM and exits 0', async () => {
    const { cli, url, session, dataDir } = await startCli();
    let signalled = false;
    const result = await createConcurrently(url, session, 150, (acknowledged) => {
      if (!signalled && acknowledged >= 20) {
        signalled = true;
        cli.child.kill('SIGTERM');
      }
    });
    // Promptly, even though the client keeps its keep-alive connections open.
    const exit = await Promise.race([
      cli.exited,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('no exit within 10 s of SIGTERM')), 10_000).unref(),
      ),
    ]);
    expect(exit.code).toBe(0);
    expect(result.acknowledged.length).toBeGreaterThanOrEqual(20);
    // A clean exit releases the data directory.
    await expect(readFile(join(dataDir, LOCK_FILE_NAME))).rejects.toThrow(/ENOENT/);
    await expectAllReadable(dataDir, result.acknowledged);
  });
});
