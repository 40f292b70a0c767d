import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningClis, spawnCli } from '../helpers/cli-process';
import {
  ADMIN,
  contentOf,
  portfolioBody,
  removeDir,
  startNode,
  stopNode,
  syncNow,
  tempDir,
  type Node,
} from './two-process';

/** `serve --hub`, background rounds, `portfolio sync`, and changes the hub refuses. */
describe('sync from the command line and in the background', () => {
  let hub: Node;
  const dirs: string[] = [];
  const hubEnv = {
    PORTFOLIO_HUB_USERNAME: ADMIN.username,
    PORTFOLIO_HUB_PASSWORD: ADMIN.password,
  };

  beforeAll(async () => {
    const hubDir = await tempDir('hub-');
    dirs.push(hubDir);
    hub = await startNode('hub', hubDir);
  }, 120_000);
  afterAll(async () => {
    await killRunningClis();
    for (const dir of dirs) await removeDir(dir);
  });

  async function waitFor(check: () => Promise<boolean>, what: string) {
    const deadline = Date.now() + 60_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  it('serve --hub signs in at start and syncs local changes in the background', async () => {
    const dir = await tempDir('replica-');
    dirs.push(dir);
    const replica = await startNode('replica', dir, {
      ...hubEnv,
      PORTFOLIO_HUB: hub.url,
      PORTFOLIO_SYNC_INTERVAL_S: '60',
    });
    const config = await replica.request('GET', '/api/v1/sync/config');
    expect(config.status).toBe(200);
    expect(config.body.hubUrl).toBe(hub.url);
    const created = await replica.request(
      'POST',
      '/api/v1/portfolio',
      portfolioBody({ projectTitle: 'pushed by itself' }),
    );
    expect(created.status).toBe(201);
    // No run is asked for: the debounced background round pushes it.
    await waitFor(
      async () =>
        (await hub.request('GET', `/api/v1/portfolio/${created.body.portfolioId}`)).status === 200,
      'the background round',
    );
    await stopNode(replica);
  });

  it('portfolio sync runs one round for a stopped data directory: 0, 1 or 2 with words', async () => {
    const dir = await tempDir('replica-cli-');
    dirs.push(dir);
    // Only serve creates a library: sync on the new folder refuses and leaves it empty.
    const refused = spawnCli(['sync', '--data-dir', dir, '--hub', hub.url], hubEnv);
    expect((await refused.exited).code).toBe(1);
    expect(refused.stderr()).toMatch(/holds no Portfolio Manager data/);
    expect(await readdir(dir)).toEqual([]);
    await stopNode(await startNode('replica-cli', dir));

    const ok = spawnCli(['sync', '--data-dir', dir, '--hub', hub.url], hubEnv);
    expect((await ok.exited).code, ok.stdout() + ok.stderr()).toBe(0);
    expect(ok.stdout()).toMatch(/Syncing .* with http:\/\/127\.0\.0\.1:\d+ as admin/);
    expect(ok.stdout()).toMatch(/Done: pulled \d+, pushed 0/);

    // Again without --hub: the data directory remembers its hub.
    const again = spawnCli(['sync', '--data-dir', dir]);
    expect((await again.exited).code, again.stdout() + again.stderr()).toBe(0);
    const replica = await startNode('replica-cli', dir);
    expect([...(await contentOf(replica)).keys()].sort()).toEqual(
      [...(await contentOf(hub)).keys()].sort(),
    );
    await stopNode(replica);

    const wrong = spawnCli(['sync', '--data-dir', dir, '--hub', 'http://127.0.0.1:1'], hubEnv);
    expect((await wrong.exited).code).toBe(1);
    expect(wrong.stderr()).toMatch(/cannot be reached/);

    const usage = spawnCli(['sync', '--data-dir', dir, '--hub', hub.url]);
    expect((await usage.exited).code).toBe(2);
    expect(usage.stderr()).toMatch(/PORTFOLIO_HUB_USERNAME and PORTFOLIO_HUB_PASSWORD/);
  }, 90_000);

  it('a change the hub refuses is kept, said in words, and not sent again until edited', async () => {
    const made = await hub.request('POST', '/api/v1/users', {
      username: 'artist',
      password: 'artist-password-1',
      role: 'editor',
      allowEdit: ['Art'],
    });
    expect(made.status).toBe(201);
    const dir = await tempDir('replica-editor-');
    dirs.push(dir);
    const replica = await startNode('replica-editor', dir);
    const configured = await replica.request('PUT', '/api/v1/sync/config', {
      hubUrl: hub.url,
      username: 'artist',
      password: 'artist-password-1',
    });
    expect(configured.status).toBe(200);
    const created = await replica.request(
      'POST',
      '/api/v1/portfolio',
      portfolioBody({ category: 'Interior', projectTitle: 'not my category' }),
    );
    expect(created.status).toBe(201);
    const first = await syncNow(replica);
    expect(first.pushed).toBe(1);
    const status = (await replica.request('GET', '/api/v1/sync/status')).body;
    expect(status.lastError).toMatchObject({ code: 'SYNC_REJECTED' });
    expect(status.lastError.message).toMatch(/the hub refused 1 change/);
    expect(status.pending.changes).toBe(0);
    expect(replica.proc.stdout() + replica.proc.stderr()).toMatch(/hub refused the change/);
    expect(
      (await replica.request('GET', `/api/v1/portfolio/${created.body.portfolioId}`)).status,
    ).toBe(200);
    expect((await syncNow(replica)).pushed).toBe(0);
    expect((await hub.request('GET', `/api/v1/portfolio/${created.body.portfolioId}`)).status).toBe(
      404,
    );
    await stopNode(replica);
  });
});
