import type { MenuItemConstructorOptions } from 'electron';
import { describe, expect, it, vi } from 'vitest';
import { aboutDetail, menuTemplate, type MenuActions } from '../../electron/main/menu';

const actions = (): MenuActions => ({
  newPortfolio: vi.fn(),
  openDataFolder: vi.fn(),
  openBackups: vi.fn(),
  showAbout: vi.fn(),
  openDocs: vi.fn(),
});

/** Every item, flattened, with the top-level menu it is in. */
function items(template: MenuItemConstructorOptions[]) {
  return template.flatMap((menu) =>
    ((menu.submenu ?? []) as MenuItemConstructorOptions[]).map((item) => ({
      menu: menu.label ?? menu.role,
      ...item,
    })),
  );
}

const click = (item: MenuItemConstructorOptions | undefined) =>
  (item?.click as unknown as () => void)();

describe('application menu', () => {
  it('has File, Edit, View and Help with the agreed items', () => {
    const menu = actions();
    const template = menuTemplate({
      platform: 'linux',
      development: false,
      appName: 'Portfolio Manager',
      actions: menu,
    });
    expect(template.map((m) => m.label ?? m.role)).toEqual([
      '&File',
      'editMenu',
      '&View',
      'windowMenu',
      'help',
    ]);
    const all = items(template);
    const labelled = (label: string) => all.find((item) => item.label === label);

    click(labelled('New Portfolio'));
    expect(menu.newPortfolio).toHaveBeenCalled();
    click(labelled('Open Data Folder'));
    expect(menu.openDataFolder).toHaveBeenCalled();
    click(labelled('Backups…'));
    expect(menu.openBackups).toHaveBeenCalled();
    click(labelled('About Portfolio Manager'));
    expect(menu.showAbout).toHaveBeenCalled();
    click(labelled('API Documentation'));
    expect(menu.openDocs).toHaveBeenCalled();

    expect(
      all
        .filter((i) => i.menu === '&File')
        .map((i) => i.role)
        .filter(Boolean),
    ).toEqual(['quit']);
    const view = all.filter((i) => i.menu === '&View').map((i) => i.role);
    expect(view).toEqual(expect.arrayContaining(['reload', 'zoomIn', 'zoomOut', 'resetZoom']));
  });

  it('offers dev tools only in development', () => {
    const roles = (development: boolean) =>
      items(menuTemplate({ platform: 'linux', development, appName: 'P', actions: actions() })).map(
        (i) => i.role,
      );
    expect(roles(false)).not.toContain('toggleDevTools');
    expect(roles(true)).toContain('toggleDevTools');
  });

  it('follows macOS conventions there', () => {
    const template = menuTemplate({
      platform: 'darwin',
      development: false,
      appName: 'P',
      actions: actions(),
    });
    expect(template[0]!.role).toBe('appMenu');
  });

  it('shows the versions in About', () => {
    const text = aboutDetail(
      { app: '0.1.0', electron: '38.8.6', chrome: '140.0', node: '22.1.0' },
      '/data',
    );
    expect(text).toContain('Version 0.1.0');
    expect(text).toContain('Electron 38.8.6');
    expect(text).toContain('Chromium 140.0');
    expect(text).toContain('Node.js 22.1.0');
    expect(text).toContain('/data');
  });
});
