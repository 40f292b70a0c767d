import type { MenuItemConstructorOptions } from 'electron';
import type { AppVersions } from '../../shared/desktop-bridge';

export interface MenuActions {
  newPortfolio(): void;
  openDataFolder(): void;
  /** Settings → Backups: back up now, verify, where backups go. */
  openBackups(): void;
  showAbout(): void;
  openDocs(): void;
}

export interface MenuOptions {
  platform: NodeJS.Platform;
  /** Dev tools only while developing: in a shipped app they are a way around the lockdown. */
  development: boolean;
  appName: string;
  actions: MenuActions;
}

/** The application menu, as a template (Menu.buildFromTemplate makes it real in index.ts). */
export function menuTemplate(options: MenuOptions): MenuItemConstructorOptions[] {
  const { actions, platform, development } = options;
  const mac = platform === 'darwin';
  const template: MenuItemConstructorOptions[] = [];
  if (mac) template.push({ role: 'appMenu', label: options.appName });
  template.push(
    {
      label: '&File',
      submenu: [
        { label: 'New Portfolio', accelerator: 'CmdOrCtrl+N', click: () => actions.newPortfolio() },
        { type: 'separator' },
        { label: 'Open Data Folder', click: () => actions.openDataFolder() },
        { label: 'Backups…', click: () => actions.openBackups() },
        { type: 'separator' },
        mac ? { role: 'close' } : { role: 'quit' },
      ],
    },
    { role: 'editMenu' },
    {
      label: '&View',
      submenu: [
        { role: 'reload' },
        ...(development
          ? ([{ role: 'forceReload' }, { role: 'toggleDevTools' }] as MenuItemConstructorOptions[])
          : []),
        { type: 'separator' },
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { type: 'separator' },
        { role: 'togglefullscreen' },
      ],
    },
    { role: 'windowMenu' },
    {
      role: 'help',
      submenu: [
        { label: 'API Documentation', click: () => actions.openDocs() },
        { type: 'separator' },
        { label: `About ${options.appName}`, click: () => actions.showAbout() },
      ],
    },
  );
  return template;
}

/** The About text: what a bug report needs. */
export function aboutDetail(versions: AppVersions, dataDir: string): string {
  return [
    `Version ${versions.app}`,
    `Electron ${versions.electron}`,
    `Chromium ${versions.chrome}`,
    `Node.js ${versions.node}`,
    '',
    `Data folder: ${dataDir}`,
  ].join('\n');
}
