import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LanSharing, parseLanRequest } from '../../electron/main/lan-sharing';
import { LanSharingError } from '../../electron/main/server-host';
import { SettingsStore } from '../../electron/main/settings-store';
import { makeTempDir } from '../helpers/test-server';

/** A host double: records what it was asked, fails on the ports it is told are taken. */
class FakeHost {
  lanPort: number | null = null;
  taken = new Set<number>();
  async shareOnLan(port: number) {
    if (this.taken.has(port)) throw new LanSharingError(`Port ${port} is already in use.`);
    this.lanPort = port;
  }
  async stopLanSharing() {
    this.lanPort = null;
  }
}

const addresses = (port: number) => [
  { interfaceName: 'eth0', address: '192.168.1.20', url: `http://192.168.1.20:${port}/` },
];

describe('LAN sharing setting', () => {
  let dir: string;
  let settings: SettingsStore;
  let host: FakeHost;
  let lan: LanSharing;
  beforeEach(async () => {
    dir = await makeTempDir('portfolio-lan-');
    settings = await SettingsStore.open(join(dir, 'settings.json'));
    host = new FakeHost();
    lan = new LanSharing(host, settings, addresses);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('is off by default and lists no addresses', () => {
    expect(lan.status()).toEqual({
      enabled: false,
      port: 8080,
      listening: false,
      addresses: [],
      error: null,
    });
  });

  it('turns on with a port, lists addresses and remembers the choice', async () => {
    const status = await lan.set({ enabled: true, port: 9123 });
    expect(status).toEqual({
      enabled: true,
      port: 9123,
      listening: true,
      addresses: addresses(9123),
      error: null,
    });
    const reopened = await SettingsStore.open(settings.path);
    expect(reopened.get().lanSharing).toEqual({ enabled: true, port: 9123 });
  });

  it('restores saved sharing at start-up', async () => {
    await settings.update((draft) => {
      draft.lanSharing = { enabled: true, port: 9200 };
    });
    const status = await new LanSharing(host, settings, addresses).restore();
    expect(host.lanPort).toBe(9200);
    expect(status.listening).toBe(true);
  });

  it('shows a failure at start-up without throwing, and keeps the saved choice', async () => {
    await settings.update((draft) => {
      draft.lanSharing = { enabled: true, port: 9200 };
    });
    host.taken.add(9200);
    const status = await new LanSharing(host, settings, addresses).restore();
    expect(status).toMatchObject({ enabled: true, listening: false, addresses: [] });
    expect(status.error).toContain('already in use');
  });

  it('does not save a port that could not be used', async () => {
    await lan.set({ enabled: true, port: 9300 });
    host.taken.add(9301);
    const status = await lan.set({ enabled: true, port: 9301 });
    expect(status).toMatchObject({ enabled: true, port: 9300, listening: true });
    expect(status.error).toContain('Port 9301');
    expect(settings.get().lanSharing).toEqual({ enabled: true, port: 9300 });
  });

  it('rejects ports outside 1024..65535 with a message', async () => {
    for (const port of [80, 70000, 8080.5]) {
      const status = await lan.set({ enabled: true, port });
      expect(status.error).toBe('The port must be a whole number from 1024 to 65535.');
      expect(status.listening).toBe(false);
    }
    expect(settings.get().lanSharing.enabled).toBe(false);
  });

  it('turns off, clears the error and remembers the port', async () => {
    await lan.set({ enabled: true, port: 9400 });
    const status = await lan.set({ enabled: false, port: 9401 });
    expect(status).toEqual({
      enabled: false,
      port: 9401,
      listening: false,
      addresses: [],
      error: null,
    });
    expect(host.lanPort).toBeNull();
  });

  it('treats IPC arguments as untrusted', async () => {
    expect(parseLanRequest({ enabled: 'true', port: 9000 })).toBeNull();
    expect(parseLanRequest(null)).toBeNull();
    expect(parseLanRequest({ enabled: true, port: 9000, extra: 1 })).toEqual({
      enabled: true,
      port: 9000,
    });
    await expect(lan.set('on')).rejects.toThrow(TypeError);
  });
});
