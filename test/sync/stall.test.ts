import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningClis } from '../helpers/cli-process';
import { connect, removeDir, startHubAndReplica, type Node } from './two-process';

/**
 * A TCP stand-in for the hub's address: passes connections through to the hub, or accepts them
 * and says nothing (a half-started hub), or accepts them and closes them at once.
 */
async function tcpGate(target: string) {
  const upstream = new URL(target);
  const sockets = new Set<Socket>();
  const gate = { mode: 'pass' as 'pass' | 'silent' | 'close', url: '' };
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    if (gate.mode === 'close') return void socket.destroy();
    if (gate.mode === 'silent') return void socket.resume();
    const hub = createConnection({ host: upstream.hostname, port: Number(upstream.port) });
    hub.on('error', () => socket.destroy());
    socket.on('close', () => hub.destroy());
    hub.on('close', () => socket.destroy());
    socket.pipe(hub).pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  gate.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    gate,
    /** Every open connection is cut, so the next request connects in the new mode. */
    set(mode: typeof gate.mode) {
      gate.mode = mode;
      for (const socket of sockets) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Issue 26, point 6: a hub address that accepts connections and then says nothing must not hold
 * a round for the two-minute request timeout; the round fails in seconds, the status says
 * `offline`, and rounds back off.
 */
describe('a hub that accepts connections and says nothing', () => {
  let hub: Node;
  let replica: Node;
  let tcp: Awaited<ReturnType<typeof tcpGate>>;
  const dirs: string[] = [];

  beforeAll(async () => {
    ({ hub, replica } = await startHubAndReplica(dirs));
    tcp = await tcpGate(hub.url);
    await connect(replica, hub, tcp.gate.url);
  }, 120_000);
  afterAll(async () => {
    await tcp?.close();
    await killRunningClis();
    for (const dir of dirs) await removeDir(dir);
  });

  it('a silent hub: the round fails within seconds as offline, not after two minutes', async () => {
    tcp.set('silent');
    const started = Date.now();
    const failed = await replica.request('POST', '/api/v1/sync/run');
    const took = Date.now() - started;
    expect(failed.status).toBe(400);
    expect(failed.body.code).toBe('HUB_UNREACHABLE');
    expect(failed.body.message).toMatch(/did not answer within \d+ s/);
    expect(failed.body.message).not.toMatch(/[[\]\\^$]/);
    expect(took).toBeLessThan(20_000);
    const status = (await replica.request('GET', '/api/v1/sync/status')).body;
    expect(status.state).toBe('offline');
    expect(status.lastError.code).toBe('HUB_UNREACHABLE');

    tcp.set('pass');
    const ok = await replica.request('POST', '/api/v1/sync/run');
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect((await replica.request('GET', '/api/v1/sync/status')).body.state).toBe('idle');
  }, 60_000);

  it('a hub that closes every connection at once: offline in seconds', async () => {
    tcp.set('close');
    const started = Date.now();
    const failed = await replica.request('POST', '/api/v1/sync/run');
    expect(failed.status).toBe(400);
    expect(failed.body.code).toBe('HUB_UNREACHABLE');
    expect(Date.now() - started).toBeLessThan(20_000);
    expect((await replica.request('GET', '/api/v1/sync/status')).body.state).toBe('offline');
    tcp.set('pass');
    expect((await replica.request('POST', '/api/v1/sync/run')).status).toBe(200);
  }, 60_000);
});
