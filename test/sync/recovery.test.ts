import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningClis } from '../helpers/cli-process';
import { serverError, startPairBehindProxy, type Proxy } from './proxy';
import {
  connect,
  contentOf,
  removeDir,
  startNode,
  stopNode,
  syncNow,
  tempDir,
  type Node,
  createPortfolio as create,
} from './two-process';

/**
 * Sync when things go wrong, with real processes: the hub away, a hub restored empty, a feed
 * that answers 410, a hub failing every third request, a revoked device.
 */
describe('sync recovery, two processes', () => {
  let hub: Node;
  let replica: Node;
  let proxy: Proxy;
  let hubPort: number;
  const dirs: string[] = [];

  beforeAll(async () => {
    ({ hub, replica, proxy, hubPort } = await startPairBehindProxy(dirs));
  }, 120_000);
  afterAll(async () => {
    await proxy.close();
    await killRunningClis();
    for (const dir of dirs) await removeDir(dir);
  });

  async function expectConverged() {
    const [a, b] = await Promise.all([contentOf(hub), contentOf(replica)]);
    expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
    for (const [id, portfolio] of a) expect(b.get(id), id).toEqual(portfolio);
  }

  async function status() {
    return (await replica.request('GET', '/api/v1/sync/status')).body;
  }

  async function restartHub(dataDir: string) {
    hub = await startNode('hub', dataDir, {}, hubPort);
  }

  it('works offline while the hub is stopped, says so in words, and catches up on reconnect', async () => {
    await create(hub, { projectTitle: 'before the outage' });
    await syncNow(replica);
    await stopNode(hub);

    const offline = await create(replica, { projectTitle: 'typed while offline' });
    const failed = await replica.request('POST', '/api/v1/sync/run');
    expect(failed.status).toBe(400);
    expect(failed.body.code).toBe('HUB_UNREACHABLE');
    expect(failed.body.message).toMatch(/cannot be reached/);
    const away = await status();
    expect(away).toMatchObject({ state: 'offline', pending: { changes: 1 } });
    expect(away.lastError).toMatchObject({ code: 'HUB_UNREACHABLE' });

    await restartHub(dirs[0]!);
    const round = await syncNow(replica);
    expect(round.pushed).toBe(1);
    expect((await hub.request('GET', `/api/v1/portfolio/${offline}`)).status).toBe(200);
    expect(await status()).toMatchObject({
      state: 'idle',
      lastError: null,
      pending: { changes: 0 },
    });
    await expectConverged();
  });

  it('a feed that answers 410 starts a full pull and loses nothing', async () => {
    await create(hub, { projectTitle: 'after a resync' });
    let gone = true;
    proxy.inject = (method, path) => {
      if (gone && method === 'GET' && /\/api\/v1\/changes\?since=[1-9]/.test(path)) {
        gone = false;
        return {
          status: 410,
          body: {
            result: 'error',
            statusCode: 410,
            error: 'Gone',
            code: 'RESYNC_REQUIRED',
            message: 'Changes that old are no longer known; start again from since=0.',
            details: [],
          },
        };
      }
      return undefined;
    };
    const round = await syncNow(replica);
    proxy.inject = () => undefined;
    expect(gone).toBe(false);
    expect(round.pulled).toBeGreaterThanOrEqual((await contentOf(hub)).size);
    await expectConverged();
  });

  it('still converges when the hub answers 500 to every third request', async () => {
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await create(replica, { projectTitle: `flaky ${i}` }));
    for (let i = 0; i < 3; i++) await create(hub, { projectTitle: `hub flaky ${i}` });
    const seen = proxy.requests;
    proxy.inject = (_method, _path, index) => (index % 3 === 0 ? serverError : undefined);
    try {
      let rounds = 0;
      for (;;) {
        rounds++;
        const response = await replica.request('POST', '/api/v1/sync/run');
        if (response.status === 200 && (await status()).pending.changes === 0) break;
        if (response.status !== 200) expect(response.body.code).toBe('HUB_ERROR');
        expect(rounds).toBeLessThan(20);
      }
      expect(proxy.requests - seen).toBeGreaterThan(3); // the 500s were really answered
    } finally {
      proxy.inject = () => undefined;
    }
    await syncNow(replica);
    for (const id of ids)
      expect((await hub.request('GET', `/api/v1/portfolio/${id}`)).status).toBe(200);
    await expectConverged();
  });

  it('a hub restored to an empty directory gets everything pushed again; nothing is deleted', async () => {
    const before = await contentOf(replica);
    expect(before.size).toBeGreaterThan(3);
    await stopNode(hub);
    const emptyDir = await tempDir('hub-restored-');
    dirs.push(emptyDir);
    await restartHub(emptyDir);

    // The new hub does not know this device: the replica says so and keeps everything.
    const refused = await replica.request('POST', '/api/v1/sync/run');
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('SYNC_DEVICE_REVOKED');
    expect(refused.body.message).toMatch(/signed out of the hub; sign in again/);
    expect((await contentOf(replica)).size).toBe(before.size);

    await connect(replica, hub, proxy.url);
    const round = await syncNow(replica);
    expect(round.pushed).toBe(before.size);
    const after = await contentOf(hub);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    await expectConverged();
  });

  it('a revoked device token: the round fails in words and nothing local changes', async () => {
    const devices = await hub.request('GET', '/api/v1/devices');
    expect(devices.status).toBe(200);
    for (const device of devices.body.devices)
      expect((await hub.request('DELETE', `/api/v1/devices/${device.deviceId}`)).status).toBe(204);
    const local = await contentOf(replica);
    const response = await replica.request('POST', '/api/v1/sync/run');
    expect(response.status).toBe(401);
    expect(response.body.code).toBe('SYNC_DEVICE_REVOKED');
    const now = await status();
    expect(now.state).toBe('error');
    expect(now.lastError).toMatchObject({ code: 'SYNC_DEVICE_REVOKED' });
    expect(await contentOf(replica)).toEqual(local);
    expect(replica.proc.stdout() + replica.proc.stderr()).toMatch(/SYNC_DEVICE_REVOKED/);
  });
});
