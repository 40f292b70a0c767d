import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BrowserWindow,
  Menu,
  app,
  dialog,
  ipcMain,
  safeStorage,
  screen,
  session,
  shell,
} from 'electron';
import { buildApp } from '../../server/app';
import type { AppVersions } from '../../shared/desktop-bridge';
import { desktopAppOptions } from './app-options';
import { resolveDataDir } from './data-dir';
import { devApiPort } from './dev-server';
import { registerIpcHandlers } from './ipc';
import { LanSharing } from './lan-sharing';
import { bringToFront, claimSingleInstance, quitAfterShutdown } from './lifecycle';
import { aboutDetail, menuTemplate } from './menu';
import { OwnerSessions, ensureOwner } from './owner-account';
import { lockDownSession, lockDownWebContents, type SecurityOptions } from './security';
import { ServerHost } from './server-host';
import { SettingsStore } from './settings-store';
import { startupErrorDialog } from './startup-errors';
import { desktopSecretBox } from './token-secret-box';
import { createMainWindow } from './window';

/*
 * The main process only orchestrates: each step lives in its own module, which receives the
 * Electron objects it needs as arguments (the seam the Node tests use).
 */

const assetPath = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));
const PRELOAD = assetPath('../preload/index.cjs');
const RENDERER_DIR = assetPath('../renderer');
const ICON = assetPath('../../resources/icon.png');

/** `electron-vite dev`: the window loads the Vite dev server (hot reload). */
const devRendererUrl = !app.isPackaged ? process.env.ELECTRON_RENDERER_URL : undefined;
const development = Boolean(devRendererUrl);

// End-to-end tests point the app at a throw-away profile; must happen before `ready`.
if (process.env.PORTFOLIO_USER_DATA_DIR)
  app.setPath('userData', process.env.PORTFOLIO_USER_DATA_DIR);
// Every renderer sandboxed, including any a bug might create besides the main window.
app.enableSandbox();

let mainWindow: BrowserWindow | null = null;
let host: ServerHost | null = null;

const versions = (): AppVersions => ({
  app: app.getVersion(),
  electron: process.versions.electron ?? '',
  chrome: process.versions.chrome ?? '',
  node: process.versions.node,
});

async function start(): Promise<void> {
  const userData = app.getPath('userData');
  const settings = await SettingsStore.open(join(userData, 'settings.json'));
  const dataDir = resolveDataDir(process.env, userData);
  const serverHost = new ServerHost({
    loopbackPort: development ? devApiPort() : 0,
    build: () =>
      buildApp(
        desktopAppOptions({
          dataDir,
          rendererDir: RENDERER_DIR,
          logLevel: process.env.PORTFOLIO_LOG_LEVEL ?? (development ? 'info' : 'warn'),
          // After `ready`: only then does safeStorage know whether a keychain is there.
          secretBox: desktopSecretBox(safeStorage, dataDir),
        }),
      ),
  });
  host = serverHost;
  quitAfterShutdown(
    app,
    async () => {
      await serverHost.stop();
      await settings.flush();
    },
    (error) => console.error('Shutdown did not finish cleanly:', error),
  );

  let origin: string;
  try {
    origin = await serverHost.start();
  } catch (error) {
    const { title, message } = startupErrorDialog(error, dataDir);
    dialog.showErrorBox(title, message);
    app.exit(1);
    return;
  }

  const facade = serverHost.app.shell;
  const owner = new OwnerSessions(facade, await ensureOwner(facade));
  const lan = new LanSharing(serverHost, settings);
  await lan.restore();

  const windowUrl = devRendererUrl ?? `${origin}/`;
  const origins = devRendererUrl ? [origin, new URL(devRendererUrl).origin] : [origin];
  const security: SecurityOptions = {
    origins: () => origins,
    openExternal: (url) => shell.openExternal(url),
    development,
  };
  lockDownSession(session.defaultSession, security);
  app.on('web-contents-created', (_event, contents) => lockDownWebContents(contents, security));

  registerIpcHandlers({
    ipcMain,
    origins: () => origins,
    trustedWebContentsIds: () => new Set(mainWindow ? [mainWindow.webContents.id] : []),
    handlers: {
      getSession: () => owner.get(),
      getServerInfo: () => ({ origin, dataDir, ownerUsername: owner.username }),
      getLanStatus: () => lan.status(),
      setLanSharing: (request) => lan.set(request),
      openDataFolder: () => openDataFolder(dataDir),
      getVersions: () => versions(),
    },
  });

  const openWindow = () => {
    mainWindow = createMainWindow({
      BrowserWindow,
      workAreas: () => screen.getAllDisplays().map((display) => display.workArea),
      settings,
      preloadPath: PRELOAD,
      url: windowUrl,
      icon: ICON,
      confirmLeave: (window) =>
        dialog.showMessageBoxSync(window, {
          type: 'question',
          buttons: ['Leave', 'Stay'],
          defaultId: 1,
          cancelId: 1,
          message: 'Leave without saving?',
          detail: 'You have changes that are not saved yet. If you leave now, they are lost.',
        }) === 0,
    });
    mainWindow.on('closed', () => {
      mainWindow = null;
    });
  };

  Menu.setApplicationMenu(
    Menu.buildFromTemplate(
      menuTemplate({
        platform: process.platform,
        development,
        appName: app.getName(),
        actions: {
          // A full load of the route: the main process cannot reach the renderer's router.
          newPortfolio: () => void mainWindow?.loadURL(new URL('/portfolios/new', windowUrl).href),
          openDataFolder: () => void openDataFolder(dataDir).catch(showError),
          openBackups: () => void mainWindow?.loadURL(new URL('/settings#backups', windowUrl).href),
          openDocs: () => void shell.openExternal(`${origin}/docs`),
          showAbout: () =>
            void dialog.showMessageBox({
              type: 'info',
              title: `About ${app.getName()}`,
              message: app.getName(),
              detail: aboutDetail(versions(), dataDir),
            }),
        },
      }),
    ),
  );

  app.on('activate', () => {
    // macOS: clicking the dock icon with no window open brings one back.
    if (!bringToFront(mainWindow)) openWindow();
  });
  openWindow();
}

async function openDataFolder(dataDir: string): Promise<void> {
  const problem = await shell.openPath(dataDir);
  if (problem) throw new Error(`Could not open ${dataDir}: ${problem}`);
}

function showError(error: unknown): void {
  dialog.showErrorBox('Portfolio Manager', error instanceof Error ? error.message : String(error));
}

if (!claimSingleInstance(app, () => bringToFront(mainWindow))) {
  app.quit();
} else {
  app.on('window-all-closed', () => {
    // macOS apps stay open without windows; elsewhere closing the window quits.
    if (process.platform !== 'darwin') app.quit();
  });
  // Ctrl+C in a terminal or a service manager: quit through will-quit, which flushes writes.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => app.quit());
  app
    .whenReady()
    .then(start)
    .catch(async (error: unknown) => {
      console.error(error);
      showError(error);
      await host?.stop().catch(() => {});
      app.exit(1);
    });
}
