// A stand-in for the `electron` module, for running the built main process (out/main/index.js)
// in plain Node: test/e2e/desktop-boot.spec.ts starts `node --import ./register.mjs
// out/main/index.js` with an IPC channel. Each Electron call the main process makes that a test
// checks is reported to the parent as { type: 'event', name, ...details }; the parent drives
// the app with { type: 'invoke' | 'click-menu' | 'second-instance' | 'close-window', id, ... }
// and gets { type: 'reply', id, value | error }. Electron behaviour the boot relies on is kept:
// quit runs will-quit (preventable), closing the last window emits window-all-closed, a new
// window's WebContents is announced with web-contents-created.
import { EventEmitter } from 'node:events';

function report(name, details = {}) {
  process.send?.({ type: 'event', name, ...details });
}

/** A value that survives process.send: functions become the string "function". */
function plain(value) {
  return JSON.parse(
    JSON.stringify(value, (_key, item) => (typeof item === 'function' ? 'function' : item)),
  );
}

const paths = new Map([['userData', process.env.STAND_IN_USER_DATA ?? process.cwd()]]);

class StandInApp extends EventEmitter {
  isPackaged = false;
  #quitting = false;

  getName() {
    return 'Portfolio Manager';
  }
  getVersion() {
    return '0.0.0-stand-in';
  }
  getPath(name) {
    return paths.get(name) ?? `/stand-in/${name}`;
  }
  setPath(name, value) {
    paths.set(name, value);
    report('set-path', { pathName: name, value });
  }
  enableSandbox() {
    report('enable-sandbox');
  }
  /** Another instance holds the lock when the test says so (STAND_IN_INSTANCE_LOCK=held). */
  requestSingleInstanceLock() {
    const granted = process.env.STAND_IN_INSTANCE_LOCK !== 'held';
    report('single-instance-lock', { granted });
    return granted;
  }
  whenReady() {
    return Promise.resolve().then(() => {
      report('ready');
      this.emit('ready');
    });
  }
  /** Electron's order: before-quit, windows close, will-quit (preventable), quit, exit. */
  quit() {
    report('quit-requested');
    if (!this.#quitting) {
      this.#quitting = true;
      this.emit('before-quit', { preventDefault() {} });
      for (const window of [...StandInBrowserWindow.windows]) window.destroyWindow();
    }
    let prevented = false;
    this.emit('will-quit', { preventDefault: () => (prevented = true) });
    if (prevented) {
      report('will-quit-prevented');
      return;
    }
    this.emit('quit');
    this.exit(0);
  }
  exit(code = 0) {
    report('exit', { code });
    // Let the report reach the parent before the process goes.
    if (process.send) process.send({ type: 'bye' }, () => process.exit(code));
    else process.exit(code);
  }
}

export const app = new StandInApp();

let nextWebContentsId = 1;

class StandInWebContents extends EventEmitter {
  id = nextWebContentsId++;
  windowOpenHandler = null;
  url = '';
  setWindowOpenHandler(handler) {
    this.windowOpenHandler = handler;
  }
  getURL() {
    return this.url;
  }
}

export class StandInBrowserWindow extends EventEmitter {
  static windows = new Set();

  static getAllWindows() {
    return [...StandInBrowserWindow.windows];
  }

  #destroyed = false;

  constructor(options = {}) {
    super();
    this.options = options;
    this.webContents = new StandInWebContents();
    StandInBrowserWindow.windows.add(this);
    report('window', { options: plain(options), webContentsId: this.webContents.id });
    app.emit('web-contents-created', {}, this.webContents);
    report('web-contents-locked-down', {
      listeners: this.webContents.eventNames(),
      windowOpenHandler: this.webContents.windowOpenHandler !== null,
    });
  }

  loadURL(url) {
    this.webContents.url = url;
    report('load-url', { url });
    queueMicrotask(() => this.emit('ready-to-show'));
    return Promise.resolve();
  }
  show() {
    report('window-show');
  }
  focus() {
    report('window-focus');
  }
  maximize() {}
  restore() {}
  isMinimized() {
    return false;
  }
  isMaximized() {
    return false;
  }
  isFullScreen() {
    return false;
  }
  isDestroyed() {
    return this.#destroyed;
  }
  getNormalBounds() {
    return { x: 40, y: 30, width: 1100, height: 760 };
  }
  /** The user closes the window: close, closed, and window-all-closed after the last one. */
  close() {
    this.destroyWindow();
    if (StandInBrowserWindow.windows.size === 0) app.emit('window-all-closed');
  }
  destroyWindow() {
    if (this.#destroyed) return;
    this.emit('close', { preventDefault() {} });
    this.#destroyed = true;
    StandInBrowserWindow.windows.delete(this);
    this.emit('closed');
  }
}

export { StandInBrowserWindow as BrowserWindow };

const handlers = new Map();

export const ipcMain = {
  handle(channel, handler) {
    handlers.set(channel, handler);
    report('ipc-handle', { channel });
  },
  removeHandler(channel) {
    handlers.delete(channel);
  },
};

let applicationMenu = null;

export const Menu = {
  buildFromTemplate(template) {
    return { template };
  },
  setApplicationMenu(menu) {
    applicationMenu = menu;
    report('menu', { template: plain(menu?.template ?? null) });
  },
};

function menuItem(items, label) {
  for (const item of items ?? []) {
    if (item.label === label) return item;
    const found = menuItem(item.submenu, label);
    if (found) return found;
  }
  return null;
}

export const session = {
  defaultSession: {
    permissionRequestHandler: null,
    permissionCheckHandler: null,
    setPermissionRequestHandler(handler) {
      this.permissionRequestHandler = handler;
    },
    setPermissionCheckHandler(handler) {
      this.permissionCheckHandler = handler;
    },
    webRequest: {
      onHeadersReceived(handler) {
        session.defaultSession.headersHandler = handler;
      },
    },
  },
};

export const shell = {
  async openExternal(url) {
    report('open-external', { url });
  },
  async openPath(path) {
    report('open-path', { path });
    return '';
  },
};

export const screen = {
  getAllDisplays: () => [{ workArea: { x: 0, y: 0, width: 1920, height: 1080 } }],
};

export const dialog = {
  showErrorBox(title, message) {
    report('error-box', { title, message });
  },
  async showMessageBox(options) {
    report('message-box', { options: plain(options) });
    return { response: 0 };
  },
  showMessageBoxSync(_window, options) {
    report('message-box', { options: plain(options) });
    return 1;
  },
};

/**
 * The OS keychain behind safeStorage: available (a libsecret keyring) unless the test says
 * STAND_IN_SAFE_STORAGE=unavailable or names another backend (STAND_IN_SAFE_STORAGE=basic_text).
 * "Encryption" is a reversible byte flip behind a marker, enough to tell sealed from plain; each
 * call is reported without its content.
 */
const SEALED_MARK = Buffer.from('stand-in-keychain:');
const flip = (bytes) => Buffer.from(bytes.map((byte) => byte ^ 0x5a));
export const safeStorage = {
  isEncryptionAvailable: () => process.env.STAND_IN_SAFE_STORAGE !== 'unavailable',
  getSelectedStorageBackend: () =>
    process.env.STAND_IN_SAFE_STORAGE === 'basic_text' ? 'basic_text' : 'gnome_libsecret',
  encryptString(plain) {
    if (!safeStorage.isEncryptionAvailable()) throw new Error('Encryption is not available.');
    report('safe-storage-encrypt', { length: plain.length });
    return Buffer.concat([SEALED_MARK, flip(Buffer.from(plain, 'utf8'))]);
  },
  decryptString(encrypted) {
    if (!safeStorage.isEncryptionAvailable()) throw new Error('Decryption is not available.');
    if (!encrypted.subarray(0, SEALED_MARK.length).equals(SEALED_MARK))
      throw new Error(
        'Error while decrypting the ciphertext provided to safeStorage.decryptString.',
      );
    report('safe-storage-decrypt');
    return flip(encrypted.subarray(SEALED_MARK.length)).toString('utf8');
  },
};

/** The preload's half lives in the browser page (desktop-boot.spec.ts); these only link. */
export const contextBridge = {};
export const ipcRenderer = {};

/** What a test asks the session's handlers: how a permission request and a check end. */
function permissionAnswers() {
  const { permissionRequestHandler, permissionCheckHandler } = session.defaultSession;
  let requested = 'no handler';
  permissionRequestHandler?.({}, 'media', (granted) => (requested = granted));
  return { request: requested, check: permissionCheckHandler?.({}, 'media') ?? 'no handler' };
}

const commands = {
  /** An IPC invoke as Electron delivers it: the sender WebContents and its frame. */
  async invoke({ channel, args, frameUrl, topFrame, webContentsId }) {
    const handler = handlers.get(channel);
    if (!handler) throw new Error(`No handler for ${channel}`);
    const event = {
      sender: { id: webContentsId },
      senderFrame: { url: frameUrl, parent: topFrame ? null : {} },
    };
    return handler(event, ...args);
  },
  async 'click-menu'({ label }) {
    const item = menuItem(applicationMenu?.template, label);
    if (!item?.click) throw new Error(`No menu item "${label}"`);
    item.click();
    return null;
  },
  async 'second-instance'() {
    app.emit('second-instance', {}, [], process.cwd());
    return null;
  },
  async 'close-window'() {
    for (const window of [...StandInBrowserWindow.windows]) window.close();
    return null;
  },
  async 'session-lockdown'() {
    return {
      permissions: permissionAnswers(),
      headersHandler: typeof session.defaultSession.headersHandler === 'function',
    };
  },
};

process.on('message', (message) => {
  const command = commands[message?.type];
  if (!command) return;
  command(message).then(
    (value) => process.send?.({ type: 'reply', id: message.id, value: value ?? null }),
    (error) =>
      process.send?.({ type: 'reply', id: message.id, error: String(error?.message ?? error) }),
  );
});
