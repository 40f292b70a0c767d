import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SettingsStore, defaultSettings, parseSettings } from '../../electron/main/settings-store';
import { makeTempDir } from '../helpers/test-server';

describe('settings store', () => {
  let dir: string;
  let path: string;
  beforeEach(async () => {
    dir = await makeTempDir('portfolio-settings-');
    path = join(dir, 'nested', 'settings.json');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('starts with LAN sharing off and no saved window', async () => {
    const store = await SettingsStore.open(path);
    expect(store.get()).toEqual(defaultSettings());
    expect(store.get().lanSharing).toEqual({ enabled: false, port: 8080 });
  });

  it('persists updates durably and reads them back', async () => {
    const store = await SettingsStore.open(path);
    await store.update((draft) => {
      draft.lanSharing = { enabled: true, port: 9090 };
      draft.window = { bounds: { x: 10, y: 20, width: 1000, height: 700 }, maximized: true };
    });
    const reopened = await SettingsStore.open(path);
    expect(reopened.get().lanSharing).toEqual({ enabled: true, port: 9090 });
    expect(reopened.get().window).toEqual({
      bounds: { x: 10, y: 20, width: 1000, height: 700 },
      maximized: true,
    });
    // The atomic write leaves no temp files behind.
    expect(await readdir(join(dir, 'nested'))).toEqual(['settings.json']);
  });

  it('writes concurrent updates in call order, the last one winning', async () => {
    const store = await SettingsStore.open(path);
    await Promise.all(
      [9001, 9002, 9003, 9004].map((port) =>
        store.update((draft) => {
          draft.lanSharing.port = port;
        }),
      ),
    );
    const onDisk = JSON.parse(await readFile(path, 'utf8'));
    expect(onDisk.lanSharing.port).toBe(9004);
  });

  it('hands out copies: mutating a result does not change the store', async () => {
    const store = await SettingsStore.open(path);
    store.get().lanSharing.enabled = true;
    expect(store.get().lanSharing.enabled).toBe(false);
  });

  it('defaults invalid fields one by one', () => {
    const parsed = parseSettings({
      lanSharing: { enabled: 'yes', port: 80 },
      window: { bounds: { x: 0, y: 0, width: -5, height: 10 }, maximized: true },
    });
    expect(parsed.lanSharing).toEqual({ enabled: false, port: 8080 });
    expect(parsed.window).toEqual({ bounds: null, maximized: true });
    expect(parseSettings(null)).toEqual(defaultSettings());
  });

  it('sets an unreadable file aside instead of failing or overwriting it', async () => {
    await SettingsStore.open(path); // creates nothing yet
    await (await SettingsStore.open(path)).update(() => {});
    await writeFile(path, '{ not json');
    const store = await SettingsStore.open(path);
    expect(store.get()).toEqual(defaultSettings());
    const names = await readdir(join(dir, 'nested'));
    expect(names.some((name) => name.startsWith('settings.json.unreadable-'))).toBe(true);
  });
});
