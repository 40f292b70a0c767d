import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { IPC_CHANNELS } from '../../electron/preload/ipc-channels';
import { buildApp } from '../../server/app';
import { LOCK_FILE_NAME } from '../../server/storage/embedded/data-dir-lock';
import type { DesktopSession } from '../../shared/desktop-bridge';
import { rawGet } from '../electron/helpers';
import {
  DesktopMainProcess,
  PRELOAD_BUNDLE,
  missingBuild,
  type StandInEvent,
} from './desktop-main-process';

/**
 * The desktop app's boot, from the built bundles, where no Electron binary exists: the main
 * process (out/main/index.js) runs in Node against a stand-in `electron` module, and its
 * window's page runs in Chromium with the built preload (out/preload/index.cjs) wired to the
 * main process's IPC handlers. It runs after `npm run build` in `npm test` (a Playwright spec,
 * so it always boots the fresh build, and Chromium comes with the runner); desktop-app.spec.ts
 * boots the real Electron where its binary is installed.
 */

const notBuilt = missingBuild();
test.skip(
  notBuilt !== null,
  `Skipped: the desktop bundles are ${notBuilt}. Run \`npm run build\` first (npm test and npm run test:e2e do).`,
);
test.describe.configure({ mode: 'serial' });

/** The security baseline of the window (docs/desktop.md, Security). */
const LOCKED_DOWN = {
  preload: PRELOAD_BUNDLE,
  contextIsolation: true,
  sandbox: true,
  nodeIntegration: false,
  nodeIntegrationInSubFrames: false,
  webSecurity: true,
  allowRunningInsecureContent: false,
  experimentalFeatures: false,
  webviewTag: false,
  spellcheck: true,
};

let profile: string;
let main: DesktopMainProcess;
let windowUrl: string;
let origin: string;
let webContentsId: number;

test.beforeAll(async () => {
  profile = await mkdtemp(join(tmpdir(), 'portfolio-desktop-boot-'));
  main = DesktopMainProcess.launch(profile);
  windowUrl = (await main.event('load-url')).url as string;
  origin = new URL(windowUrl).origin;
  webContentsId = (await main.event('window')).webContentsId as number;
});

test.afterAll(async () => {
  await main?.kill();
  if (profile) await rm(profile, { recursive: true, force: true });
});

const dataDir = () => join(profile, 'data');
const labels = (items: unknown): string[] =>
  (items as { label?: string; role?: string; submenu?: unknown }[]).flatMap((item) => [
    item.label ?? `(${item.role})`,
    ...(item.submenu ? labels(item.submenu) : []),
  ]);

/** An IPC invoke from the window's top frame showing `frameUrl`. */
function invoke(channel: string, args: unknown[] = [], frameUrl = windowUrl, topFrame = true) {
  return main.request('invoke', { channel, args, frameUrl, topFrame, webContentsId });
}

test('boots: one instance, a loopback server, a locked-down window on its origin, the menu', async () => {
  const order = main.events.map((event) => event.name);
  expect(main.named('set-path')[0]).toMatchObject({ pathName: 'userData', value: profile });
  expect(main.named('single-instance-lock')).toEqual([
    { name: 'single-instance-lock', granted: true },
  ]);
  expect(order.indexOf('single-instance-lock')).toBeLessThan(order.indexOf('ready'));
  expect(order).toContain('enable-sandbox');

  // The server: on loopback, answering the API, refusing a foreign Host, holding the data dir.
  expect(windowUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
  expect((await fetch(`${origin}/api/v1/appauth`)).status).toBe(401);
  const rebound = await rawGet(`${origin}/api/v1/appauth`, { host: 'evil.example' });
  expect(rebound.status).toBe(403);
  const lock = JSON.parse(await readFile(join(dataDir(), LOCK_FILE_NAME), 'utf8'));
  expect(lock.pid).toBe(main.child.pid);

  // One window, locked down, loading the server's origin; shown only once painted.
  const windows = main.named('window');
  expect(windows).toHaveLength(1);
  const options = windows[0]!.options as { show: boolean; webPreferences: unknown };
  expect(options.webPreferences).toEqual(LOCKED_DOWN);
  expect(options.show).toBe(false);
  expect(main.named('window-show').length).toBeGreaterThanOrEqual(1);
  const contents = (await main.event('web-contents-locked-down')) as StandInEvent & {
    listeners: string[];
  };
  expect(contents.listeners).toEqual(
    expect.arrayContaining(['will-navigate', 'will-redirect', 'will-attach-webview']),
  );
  expect(contents.windowOpenHandler).toBe(true);
  expect(await main.request('session-lockdown')).toEqual({
    permissions: { request: false, check: false },
    headersHandler: true,
  });
  expect(main.named('ipc-handle').map((event) => event.channel)).toEqual(
    Object.values(IPC_CHANNELS),
  );

  // The menu, and what two of its items do.
  const menu = labels((await main.event('menu')).template);
  for (const label of ['&File', 'New Portfolio', 'Open Data Folder', 'API Documentation'])
    expect(menu).toContain(label);
  expect(menu).not.toContain('(toggleDevTools)');
  const before = main.events.length;
  await main.request('click-menu', { label: 'New Portfolio' });
  expect((await main.event('load-url', before)).url).toBe(`${origin}/portfolios/new`);
  await main.request('click-menu', { label: 'API Documentation' });
  expect((await main.event('open-external', before)).url).toBe(`${origin}/docs`);

  // A second launch brings this window forward.
  const focused = main.events.length;
  await main.request('second-instance');
  await main.event('window-focus', focused);
});

test('a second launch hands over to the first and quits, leaving the data alone', async () => {
  const second = DesktopMainProcess.launch(profile, { STAND_IN_INSTANCE_LOCK: 'held' });
  try {
    expect(await second.exited, second.log()).toBe(0);
    const names = second.events.map((event) => event.name);
    expect(second.named('single-instance-lock')).toEqual([
      { name: 'single-instance-lock', granted: false },
    ]);
    expect(names).not.toContain('ready');
    expect(names).not.toContain('window');
    const lock = JSON.parse(await readFile(join(dataDir(), LOCK_FILE_NAME), 'utf8'));
    expect(lock.pid).toBe(main.child.pid);
  } finally {
    await second.kill();
  }
});

test('the IPC handlers answer only the app’s own top frame', async () => {
  await expect(invoke(IPC_CHANNELS.getSession, [], 'http://evil.example/')).rejects.toThrow(
    /not allowed/,
  );
  await expect(invoke(IPC_CHANNELS.getSession, [], windowUrl, false)).rejects.toThrow(
    /not allowed/,
  );
  const info = await invoke(IPC_CHANNELS.getServerInfo);
  expect(info).toEqual({ origin, dataDir: dataDir(), ownerUsername: 'owner' });
});

test('in Chromium with the built preload, the window opens the gallery signed in as the owner', async ({
  page,
}) => {
  const preload = await readFile(PRELOAD_BUNDLE, 'utf8');
  // The page's IPC goes to the main process's handlers, with the frame Chromium reports.
  await page.exposeBinding('__standInIpcInvoke', (source, channel: string, args: unknown[]) =>
    main.request('invoke', {
      channel,
      args,
      frameUrl: source.frame.url(),
      topFrame: source.frame.parentFrame() === null,
      webContentsId,
    }),
  );
  // The built preload, run as Electron runs a sandboxed preload: a function of `require`,
  // which offers `electron` only; contextBridge puts the API on the page's window.
  await page.addInitScript({
    content: `(() => {
      const electron = {
        contextBridge: {
          exposeInMainWorld: (key, api) => Object.defineProperty(window, key, { value: Object.freeze(api) }),
        },
        ipcRenderer: { invoke: (channel, ...args) => window.__standInIpcInvoke(channel, args) },
      };
      const require = (name) => {
        if (name === 'electron') return electron;
        throw new Error('A sandboxed preload cannot require ' + name);
      };
      const module = { exports: {} };
      (function (require, module, exports) {\n${preload}\n})(require, module, module.exports);
    })();`,
  });

  await page.goto(windowUrl);
  await expect(page.getByRole('heading', { name: 'Gallery', level: 1 })).toBeVisible();
  await expect(page.locator('.account-name')).toHaveText(/^owner\s+admin$/);
  await expect(page.getByLabel('Password')).toHaveCount(0);
  expect(await page.evaluate(() => Object.keys(window.desktop ?? {}).sort())).toEqual(
    Object.keys(IPC_CHANNELS).sort(),
  );

  // Settings reads the shell's state over the same bridge.
  await page
    .getByRole('navigation', { name: 'Main' })
    .getByRole('link', { name: 'Settings' })
    .click();
  await expect(page.getByText(dataDir(), { exact: true })).toBeVisible();
  await expect(page.getByText('Not shared')).toBeVisible();
});

test('the hub device token is sealed with the OS keychain (safeStorage), never kept in the clear', async () => {
  const hubDir = await mkdtemp(join(tmpdir(), 'portfolio-desktop-hub-'));
  const hubAdmin = { username: 'hubadmin', password: 'hub-admin-password' };
  const hub = await buildApp({ dataDir: hubDir, logger: false, bootstrapAdmin: hubAdmin });
  try {
    const hubUrl = await hub.listen({ host: '127.0.0.1', port: 0 });
    const owner = (await invoke(IPC_CHANNELS.getSession)) as DesktopSession;
    const control = (method: string, path: string, body?: unknown) =>
      fetch(`${origin}/api/v1/sync/${path}`, {
        method,
        headers: {
          authorization: owner.sessionId,
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        body: body ? JSON.stringify(body) : undefined,
      });

    const before = main.events.length;
    const configured = await control('PUT', 'config', { hubUrl, ...hubAdmin });
    expect(configured.status, await configured.clone().text()).toBe(200);
    expect((await main.event('safe-storage-encrypt', before)).length).toBeGreaterThan(20);
    // Sealed by the keychain: no key file was needed in the data folder.
    await expect(readFile(join(dataDir(), 'sync.key'))).rejects.toThrow(/ENOENT/);

    // A round opens the token again and signs in to the hub with it.
    const round = await control('POST', 'run');
    expect(round.status, await round.clone().text()).toBe(200);
    await main.event('safe-storage-decrypt', before);
    const status = (await (await control('GET', 'status')).json()) as { state: string };
    expect(status.state).toBe('idle');

    expect((await control('DELETE', 'config')).status).toBe(204);
  } finally {
    await hub.close();
    await rm(hubDir, { recursive: true, force: true });
  }
});

test('closing the window quits once writes are flushed and the data directory is released', async () => {
  const owner = (await invoke(IPC_CHANNELS.getSession)) as DesktopSession;
  expect(owner.username).toBe('owner');
  const created = await fetch(`${origin}/api/v1/portfolio`, {
    method: 'POST',
    headers: { authorization: owner.sessionId, 'content-type': 'application/json' },
    body: JSON.stringify({
      projectTitle: 'Written before quitting',
      memberBarcode: 'M-BOOT-1',
      category: 'Ceramics',
      projectDetail: 'Must be on disk before the app exits.',
    }),
  });
  expect(created.status, await created.clone().text()).toBe(201);
  const { portfolioId } = (await created.json()) as { portfolioId: string };

  const before = main.events.length;
  await main.request('close-window');
  expect(await main.exited, main.log()).toBe(0);
  const names = main.events.slice(before).map((event) => event.name);
  // Held back once for the shutdown, then quit for real.
  expect(names).toEqual(expect.arrayContaining(['will-quit-prevented', 'exit']));
  expect(main.named('exit').at(-1)).toMatchObject({ code: 0 });

  await expect(readFile(join(dataDir(), LOCK_FILE_NAME))).rejects.toThrow(/ENOENT/);
  const settings = JSON.parse(await readFile(join(profile, 'settings.json'), 'utf8'));
  expect(settings.window.bounds).toEqual({ x: 40, y: 30, width: 1100, height: 760 });

  // Another process opens the folder and finds the write, and the owner still signed in.
  const next = await buildApp({ dataDir: dataDir(), logger: false });
  try {
    const detail = await next.inject({
      url: `/api/v1/portfolio/${portfolioId}`,
      headers: { authorization: owner.sessionId },
    });
    expect(detail.statusCode, detail.body).toBe(200);
    expect(detail.json()).toMatchObject({ portfolioId, projectTitle: 'Written before quitting' });
  } finally {
    await next.close();
  }
});
