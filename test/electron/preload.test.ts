import { beforeEach, describe, expect, it, vi } from 'vitest';
import { IPC_CHANNELS } from '../../electron/preload/ipc-channels';

const exposed = new Map<string, unknown>();
const invoke = vi.fn(async (..._args: unknown[]) => 'answer');

// The preload runs in Electron's sandbox; here `electron` is replaced by the two APIs it uses.
vi.mock('electron', () => ({
  contextBridge: { exposeInMainWorld: (key: string, api: unknown) => exposed.set(key, api) },
  ipcRenderer: { invoke: (...args: unknown[]) => invoke(...args) },
}));

describe('preload bridge', () => {
  beforeEach(async () => {
    exposed.clear();
    vi.resetModules();
    await import('../../electron/preload/index');
  });

  it('exposes one object, window.desktop, of exactly the named functions', () => {
    expect([...exposed.keys()]).toEqual(['desktop']);
    const desktop = exposed.get('desktop') as Record<string, unknown>;
    expect(Object.keys(desktop).sort()).toEqual(Object.keys(IPC_CHANNELS).sort());
    for (const value of Object.values(desktop)) expect(typeof value).toBe('function');
    // No raw IPC: nothing that could send or listen on other channels.
    expect(desktop).not.toHaveProperty('ipcRenderer');
    expect(desktop).not.toHaveProperty('invoke');
    expect(desktop).not.toHaveProperty('on');
  });

  it('invokes each function on its own fixed channel', async () => {
    const desktop = exposed.get('desktop') as Record<
      string,
      (...args: unknown[]) => Promise<unknown>
    >;
    for (const [name, channel] of Object.entries(IPC_CHANNELS)) {
      invoke.mockClear();
      if (name === 'setLanSharing') continue;
      await expect(desktop[name]!()).resolves.toBe('answer');
      expect(invoke).toHaveBeenCalledWith(channel);
    }
  });

  it('passes only the two LAN fields across', async () => {
    const desktop = exposed.get('desktop') as Record<
      string,
      (...args: unknown[]) => Promise<unknown>
    >;
    invoke.mockClear();
    await desktop.setLanSharing!({ enabled: true, port: 9000, toString: () => 'x', extra: 'nope' });
    expect(invoke).toHaveBeenCalledWith(IPC_CHANNELS.setLanSharing, { enabled: true, port: 9000 });
  });
});
