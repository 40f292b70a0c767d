import { EventEmitter } from 'node:events';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SettingsStore } from '../../electron/main/settings-store';
import { createMainWindow } from '../../electron/main/window';
import { DEFAULT_SIZE, initialBounds } from '../../electron/main/window-state';
import { makeTempDir } from '../helpers/test-server';

const SCREEN = { x: 0, y: 0, width: 1920, height: 1050 };

describe('window position', () => {
  it('opens at the default size the first time', () => {
    expect(initialBounds(null, [SCREEN])).toEqual(DEFAULT_SIZE);
  });

  it('reopens where it was when that is on a screen', () => {
    const saved = { x: 100, y: 80, width: 1200, height: 800 };
    expect(initialBounds(saved, [SCREEN])).toEqual(saved);
  });

  it('falls back to the default when the saved screen is gone', () => {
    const onUnpluggedMonitor = { x: 2500, y: 100, width: 1200, height: 800 };
    expect(initialBounds(onUnpluggedMonitor, [SCREEN])).toEqual(DEFAULT_SIZE);
  });

  it('clamps a window larger than its screen, and respects the minimum size', () => {
    expect(initialBounds({ x: 0, y: 0, width: 5000, height: 3000 }, [SCREEN])).toEqual({
      x: 0,
      y: 0,
      width: 1920,
      height: 1050,
    });
    expect(initialBounds({ x: 10, y: 10, width: 100, height: 100 }, [SCREEN])).toMatchObject({
      width: 720,
      height: 480,
    });
  });
});

class FakeWebContents extends EventEmitter {}

class FakeBrowserWindow extends EventEmitter {
  static last: FakeBrowserWindow;
  webContents = new FakeWebContents();
  show = vi.fn();
  maximize = vi.fn();
  loadURL = vi.fn(async () => undefined);
  isMaximized = () => false;
  isFullScreen = () => false;
  getNormalBounds = () => ({ x: 40, y: 50, width: 1100, height: 750 });
  constructor(readonly options: any) {
    super();
    FakeBrowserWindow.last = this;
  }
}

describe('main window', () => {
  let dir: string;
  let settings: SettingsStore;
  beforeEach(async () => {
    dir = await makeTempDir('portfolio-window-');
    settings = await SettingsStore.open(join(dir, 'settings.json'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  function open(confirmLeave = vi.fn(() => true)) {
    const window = createMainWindow({
      BrowserWindow: FakeBrowserWindow as any,
      workAreas: () => [SCREEN],
      settings,
      preloadPath: '/app/out/preload/index.cjs',
      url: 'http://127.0.0.1:5000/',
      confirmLeave,
    }) as unknown as FakeBrowserWindow;
    return { window, confirmLeave };
  }

  it('is created locked down and hidden, and loads the embedded server', () => {
    const { window } = open();
    expect(window.options.show).toBe(false);
    expect(window.options.webPreferences).toMatchObject({
      preload: '/app/out/preload/index.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
    });
    expect(window.loadURL).toHaveBeenCalledWith('http://127.0.0.1:5000/');
  });

  it('shows itself on ready-to-show', () => {
    const { window } = open();
    expect(window.show).not.toHaveBeenCalled();
    window.emit('ready-to-show');
    expect(window.show).toHaveBeenCalledTimes(1);
  });

  it('remembers its size and position on close, and reopens there', async () => {
    const { window } = open();
    window.emit('close');
    await settings.flush();
    const saved = (await SettingsStore.open(settings.path)).get().window;
    expect(saved).toEqual({ bounds: { x: 40, y: 50, width: 1100, height: 750 }, maximized: false });
    const { window: again } = open();
    expect(again.options).toMatchObject({ x: 40, y: 50, width: 1100, height: 750 });
  });

  it('asks before leaving a page with unsaved changes', () => {
    const leave = vi.fn(() => false);
    const { window } = open(leave);
    const event = { preventDefault: vi.fn() };
    window.webContents.emit('will-prevent-unload', event);
    expect(leave).toHaveBeenCalled();
    expect(event.preventDefault).not.toHaveBeenCalled(); // stays on the page
    leave.mockReturnValue(true);
    window.webContents.emit('will-prevent-unload', event);
    expect(event.preventDefault).toHaveBeenCalled(); // leaves, discarding the changes
  });
});
