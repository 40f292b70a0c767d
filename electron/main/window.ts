import type {
  BrowserWindow as BrowserWindowType,
  BrowserWindowConstructorOptions,
  Rectangle,
} from 'electron';
import type { SettingsStore } from './settings-store';
import { MIN_SIZE, initialBounds } from './window-state';

export interface MainWindowDeps {
  BrowserWindow: new (options: BrowserWindowConstructorOptions) => BrowserWindowType;
  /** Work areas of the displays connected now. */
  workAreas: () => Rectangle[];
  settings: SettingsStore;
  preloadPath: string;
  url: string;
  icon?: string;
  /** Asks the user whether to leave a page that has unsaved changes; true leaves. */
  confirmLeave: (window: BrowserWindowType) => boolean;
}

/**
 * The one window. webPreferences hold the security baseline; navigation, new windows and
 * permissions are locked down per session and per WebContents (see security.ts).
 */
export function createMainWindow(deps: MainWindowDeps): BrowserWindowType {
  const saved = deps.settings.get().window;
  const window = new deps.BrowserWindow({
    ...initialBounds(saved.bounds, deps.workAreas()),
    minWidth: MIN_SIZE.width,
    minHeight: MIN_SIZE.height,
    title: 'Portfolio Manager',
    // Shown on ready-to-show: no white flash before the first paint.
    show: false,
    ...(deps.icon ? { icon: deps.icon } : {}),
    webPreferences: {
      preload: deps.preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      webviewTag: false,
      spellcheck: true,
    },
  });
  if (saved.maximized) window.maximize();

  window.once('ready-to-show', () => window.show());

  // The renderer's unsaved-changes guard uses beforeunload; Electron would silently stay on
  // the page, so ask the way a browser does.
  window.webContents.on('will-prevent-unload', (event) => {
    if (deps.confirmLeave(window)) event.preventDefault();
  });

  window.on('close', () => {
    const maximized = window.isMaximized() || window.isFullScreen();
    const bounds = window.getNormalBounds();
    void deps.settings
      .update((draft) => {
        draft.window = { bounds, maximized };
      })
      .catch((error: unknown) => console.error('Could not save the window position:', error));
  });

  void window.loadURL(deps.url);
  return window;
}
