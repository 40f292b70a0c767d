import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningClis } from '../helpers/cli-process';
import { startPairBehindProxy, type Proxy } from './proxy';
import { createPortfolio, removeDir, type Node } from './two-process';

/**
 * Issue 26 (found by the chaos run): a connection to the hub cut in the middle of an answer is
 * the hub being unreachable, like one cut before the answer: the round fails as
 * HUB_UNREACHABLE in words, the status says `offline` (rounds back off), and the next round
 * completes. It used to fail as HUB_ERROR "sync failed: terminated", state `error`.
 */
describe('a connection cut in the middle of the hub’s answer', () => {
  let hub: Node;
  let replica: Node;
  let proxy: Proxy;
  const dirs: string[] = [];

  beforeAll(async () => {
    ({ hub, replica, proxy } = await startPairBehindProxy(dirs));
  }, 120_000);
  afterAll(async () => {
    await proxy?.close();
    await killRunningClis();
    for (const dir of dirs) await removeDir(dir);
  });

  it('fails the round as offline, in words, and the next round completes', async () => {
    const id = await createPortfolio(hub, {
      projectTitle: 'Cut feed',
      aboutProject: 'x'.repeat(20_000),
    });
    proxy.cut = (method, path) =>
      method === 'GET' && path.includes('/changes') ? 'midway' : false;
    const failed = await replica.request('POST', '/api/v1/sync/run');
    expect(failed.status, JSON.stringify(failed.body)).toBe(400);
    expect(failed.body.code).toBe('HUB_UNREACHABLE');
    expect(failed.body.message).toMatch(/connection to the hub was cut/);
    const status = (await replica.request('GET', '/api/v1/sync/status')).body;
    expect(status.state).toBe('offline');
    expect(status.lastError.code).toBe('HUB_UNREACHABLE');

    proxy.cut = () => false;
    const ok = await replica.request('POST', '/api/v1/sync/run');
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect((await replica.request('GET', `/api/v1/portfolio/${id}`)).status).toBe(200);
    expect((await replica.request('GET', '/api/v1/sync/status')).body.state).toBe('idle');
  }, 60_000);

  it('a cut hello is the hub unreachable, not "no Portfolio Manager server"', async () => {
    proxy.cut = (method, path) => (path.includes('/sync/hello') ? 'midway' : false);
    const failed = await replica.request('POST', '/api/v1/sync/run');
    proxy.cut = () => false;
    expect(failed.status, JSON.stringify(failed.body)).toBe(400);
    expect(failed.body.code).toBe('HUB_UNREACHABLE');
    expect(failed.body.message).toMatch(/the connection was cut/);
    expect((await replica.request('POST', '/api/v1/sync/run')).status).toBe(200);
  }, 60_000);
});
