import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LanSharingError, ServerHost } from '../../electron/main/server-host';
import { DataDirInUseError } from '../../server/storage/embedded/data-dir-lock';
import { makeTempDir, portfolioBody } from '../helpers/test-server';
import { buildDesktopApp, freePort, probe, rawGet } from './helpers';

describe('embedded server host', () => {
  let dataDir: string;
  let host: ServerHost;
  beforeEach(async () => {
    dataDir = await makeTempDir('portfolio-host-');
    host = new ServerHost({ build: () => buildDesktopApp(dataDir), drainMs: 200 });
  });
  afterEach(async () => {
    await host.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('listens on loopback only, with the DNS-rebinding Host check on', async () => {
    const origin = await host.start();
    expect(origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(host.app.config.loopbackOnly).toBe(true);
    expect((await rawGet(`${origin}/api/v1/appauth`)).status).toBe(401);
    const rebound = await rawGet(`${origin}/api/v1/appauth`, { host: 'evil.example:80' });
    expect(rebound.status).toBe(403);
    expect(JSON.parse(rebound.body).code).toBe('HOST_NOT_ALLOWED');
    expect(host.lanPort).toBeNull();
  });

  it('shares on the LAN on a chosen port, then stops sharing', async () => {
    const origin = await host.start();
    const port = await freePort();
    await host.shareOnLan(port);
    expect(host.lanPort).toBe(port);
    expect(host.app.config.loopbackOnly).toBe(false);
    // A LAN client names the machine by its LAN address: the Host check must let it in.
    const lan = await rawGet(`http://127.0.0.1:${port}/api/v1/appauth`, {
      host: `192.168.1.20:${port}`,
    });
    expect(lan.status).toBe(401);
    // The window's loopback origin keeps working all the while.
    expect(await probe(`${origin}/api/v1/appauth`)).toBe(401);

    await host.stopLanSharing();
    expect(host.lanPort).toBeNull();
    expect(host.app.config.loopbackOnly).toBe(true);
    expect(await probe(`http://127.0.0.1:${port}/api/v1/appauth`)).toBe('ECONNREFUSED');
    expect(await probe(`${origin}/api/v1/appauth`)).toBe(401);
  });

  it('rebinds to another port, closing the old one', async () => {
    await host.start();
    const first = await freePort();
    await host.shareOnLan(first);
    const second = await freePort();
    await host.shareOnLan(second);
    expect(host.lanPort).toBe(second);
    expect(await probe(`http://127.0.0.1:${first}/api/v1/appauth`)).toBe('ECONNREFUSED');
    expect(await probe(`http://127.0.0.1:${second}/api/v1/appauth`)).toBe(401);
  });

  it('reports a taken port clearly and keeps the current sharing', async () => {
    await host.start();
    const current = await freePort();
    await host.shareOnLan(current);
    const blocker: Server = createServer();
    const taken = await new Promise<number>((resolve) =>
      blocker.listen({ host: '0.0.0.0', port: 0 }, () => {
        const address = blocker.address();
        resolve(typeof address === 'object' && address ? address.port : 0);
      }),
    );
    try {
      const attempt = host.shareOnLan(taken);
      await expect(attempt).rejects.toBeInstanceOf(LanSharingError);
      await expect(attempt).rejects.toThrow(`Port ${taken} is already in use`);
      expect(host.lanPort).toBe(current);
      expect(await probe(`http://127.0.0.1:${current}/api/v1/appauth`)).toBe(401);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('serialises quick toggles', async () => {
    await host.start();
    const port = await freePort();
    await Promise.all([
      host.shareOnLan(port),
      host.stopLanSharing(),
      host.shareOnLan(port),
      host.stopLanSharing(),
    ]);
    expect(host.lanPort).toBeNull();
    expect(await probe(`http://127.0.0.1:${port}/`)).toBe('ECONNREFUSED');
  });

  it('stop flushes writes and releases the data directory', async () => {
    const origin = await host.start();
    const port = await freePort();
    await host.shareOnLan(port);
    const { sessionId } = await host.app.sessions.open('owner');
    const created = await fetch(`http://127.0.0.1:${port}/api/v1/portfolio`, {
      method: 'POST',
      headers: { authorization: sessionId, 'content-type': 'application/json' },
      body: JSON.stringify(portfolioBody({ projectTitle: 'Kept across restarts' })),
    });
    expect(created.status).toBe(201);
    const { portfolioId } = (await created.json()) as { portfolioId: string };

    // While running, a second server (e.g. a headless one) cannot open the folder.
    await expect(buildDesktopApp(dataDir)).rejects.toBeInstanceOf(DataDirInUseError);

    await host.stop();
    expect(await probe(`${origin}/`)).toBe('ECONNREFUSED');
    expect(await probe(`http://127.0.0.1:${port}/`)).toBe('ECONNREFUSED');

    const reopened = new ServerHost({ build: () => buildDesktopApp(dataDir) });
    try {
      await reopened.start();
      expect((await reopened.app.portfolios.get(portfolioId))?.projectTitle).toBe(
        'Kept across restarts',
      );
    } finally {
      await reopened.stop();
    }
  });

  it('refuses LAN sharing before start', async () => {
    await expect(host.shareOnLan(await freePort())).rejects.toThrow('has not started');
  });
});
