import { describe, expect, it, vi } from 'vitest';
import {
  isTrustedSender,
  registerIpcHandlers,
  UntrustedSenderError,
  type DesktopHandlers,
  type SenderEvent,
} from '../../electron/main/ipc';
import { IPC_CHANNELS } from '../../electron/preload/ipc-channels';

const ORIGIN = 'http://127.0.0.1:53124';
const WINDOW_ID = 7;

const event = (
  overrides: Partial<{ id: number; url: string; parent: unknown; frame: null }> = {},
) =>
  ({
    sender: { id: overrides.id ?? WINDOW_ID },
    senderFrame:
      overrides.frame === null
        ? null
        : { url: overrides.url ?? `${ORIGIN}/settings`, parent: overrides.parent ?? null },
  }) satisfies SenderEvent;

describe('IPC sender check', () => {
  const trusted = new Set([WINDOW_ID]);

  it('accepts the top frame of the app window on the server origin', () => {
    expect(isTrustedSender(event(), trusted, [ORIGIN])).toBe(true);
  });

  it('rejects other origins, subframes, other windows and destroyed frames', () => {
    expect(isTrustedSender(event({ url: 'https://evil.example/' }), trusted, [ORIGIN])).toBe(false);
    expect(
      isTrustedSender(event({ url: 'http://127.0.0.1:53124.evil.example/' }), trusted, [ORIGIN]),
    ).toBe(false);
    expect(isTrustedSender(event({ url: 'file:///tmp/x.html' }), trusted, [ORIGIN])).toBe(false);
    expect(isTrustedSender(event({ parent: {} }), trusted, [ORIGIN])).toBe(false);
    expect(isTrustedSender(event({ id: 99 }), trusted, [ORIGIN])).toBe(false);
    expect(isTrustedSender(event({ frame: null }), trusted, [ORIGIN])).toBe(false);
  });
});

describe('IPC registration', () => {
  function setup() {
    const registered = new Map<string, (event: unknown, ...args: unknown[]) => Promise<unknown>>();
    const ipcMain = {
      handle: vi.fn((channel: string, listener: any) => registered.set(channel, listener)),
      removeHandler: vi.fn((channel: string) => registered.delete(channel)),
    };
    const handlers: DesktopHandlers = {
      getSession: vi.fn(async () => ({
        sessionId: 's',
        createdDate: 1,
        expiredDate: 2,
        username: 'owner',
      })),
      getServerInfo: vi.fn(() => ({ origin: ORIGIN, dataDir: '/d', ownerUsername: 'owner' })),
      getLanStatus: vi.fn(() => ({
        enabled: false,
        port: 8080,
        listening: false,
        addresses: [],
        error: null,
      })),
      setLanSharing: vi.fn(async (request) => ({
        enabled: (request as { enabled: boolean }).enabled,
        port: 8080,
        listening: false,
        addresses: [],
        error: null,
      })),
      openDataFolder: vi.fn(async () => undefined),
      getVersions: vi.fn(() => ({ app: '0.1.0', electron: '38', chrome: '1', node: '22' })),
    };
    const unregister = registerIpcHandlers({
      ipcMain: ipcMain as any,
      handlers,
      trustedWebContentsIds: () => new Set([WINDOW_ID]),
      origins: () => [ORIGIN],
    });
    return { registered, handlers, unregister };
  }

  it('registers exactly the preload API channels', () => {
    const { registered } = setup();
    expect([...registered.keys()].sort()).toEqual(Object.values(IPC_CHANNELS).sort());
  });

  it('answers a trusted sender, passing the arguments through', async () => {
    const { registered, handlers } = setup();
    const status = await registered.get(IPC_CHANNELS.setLanSharing)!(event(), {
      enabled: true,
      port: 9000,
    });
    expect(handlers.setLanSharing).toHaveBeenCalledWith({ enabled: true, port: 9000 });
    expect(status).toMatchObject({ enabled: true });
  });

  it('refuses every channel to an untrusted sender without running the handler', async () => {
    const { registered, handlers } = setup();
    for (const [name, channel] of Object.entries(IPC_CHANNELS)) {
      await expect(
        registered.get(channel)!(event({ url: 'https://evil.example/' })),
      ).rejects.toBeInstanceOf(UntrustedSenderError);
      expect(handlers[name as keyof DesktopHandlers]).not.toHaveBeenCalled();
    }
  });

  it('unregisters every channel', () => {
    const { registered, unregister } = setup();
    unregister();
    expect(registered.size).toBe(0);
  });
});
