import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  _electron as electron,
  type ElectronApplication,
  type Page,
  expect,
  test,
} from '@playwright/test';

/**
 * The desktop app end to end: the built main process, preload and renderer in a real Electron.
 * The Electron binary is downloaded by the `electron` package's postinstall, from outside the
 * npm registry; where that is impossible (these CI machines install with
 * ELECTRON_SKIP_BINARY_DOWNLOAD=1) this file skips, and says why.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The Electron executable, or why there is none. */
function findElectron(): { path: string } | { missing: string } {
  let path: string;
  try {
    // The package's index.js answers the binary's path, or throws when it was never downloaded.
    path = createRequire(import.meta.url)('electron') as string;
  } catch (error) {
    return {
      missing: `the Electron binary is not installed (${(error as Error).message.split('\n')[0]})`,
    };
  }
  try {
    accessSync(path, constants.X_OK);
    return { path };
  } catch {
    return { missing: `the Electron binary at ${path} is missing or not executable` };
  }
}

const found = findElectron();

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host: '0.0.0.0', port: 0 }, () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

test.describe('desktop app (Electron)', () => {
  test.skip(
    'missing' in found,
    `Skipped: ${'missing' in found ? found.missing : ''}. Install Electron (npm install without ELECTRON_SKIP_BINARY_DOWNLOAD) to run it.`,
  );
  test.describe.configure({ mode: 'serial' });

  let app: ElectronApplication;
  let page: Page;
  let profile: string;

  test.beforeAll(async () => {
    // The test launches what `npm start` runs: the electron-vite build of all three parts.
    const build = spawnSync('npx', ['electron-vite', 'build', '--logLevel', 'warn'], {
      cwd: ROOT,
      stdio: 'inherit',
    });
    expect(build.status, 'electron-vite build').toBe(0);
    profile = await mkdtemp(join(tmpdir(), 'portfolio-desktop-e2e-'));
    app = await electron.launch({
      executablePath: 'path' in found ? found.path : undefined,
      args: [ROOT],
      cwd: ROOT,
      env: {
        ...process.env,
        PORTFOLIO_USER_DATA_DIR: profile,
        PORTFOLIO_DATA_DIR: join(profile, 'data'),
        ELECTRON_RENDERER_URL: '',
      },
    });
    page = await app.firstWindow();
  });

  test.afterAll(async () => {
    await app?.close();
    if (profile) await rm(profile, { recursive: true, force: true });
  });

  test('opens on the gallery, signed in as the owner without a password', async () => {
    await expect(page.getByRole('heading', { name: 'Gallery' })).toBeVisible();
    await expect(page.getByText('owner', { exact: false }).first()).toBeVisible();
    expect(page.url()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    // The page has the bridge and nothing of Node.
    const globals = await page.evaluate(() => ({
      desktop: typeof window.desktop?.getSession,
      require: typeof (window as unknown as { require?: unknown }).require,
      process: typeof (window as unknown as { process?: unknown }).process,
    }));
    expect(globals).toEqual({ desktop: 'function', require: 'undefined', process: 'undefined' });
  });

  test('creates a portfolio', async () => {
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'New portfolio' })
      .click();
    await page.getByLabel('Project title').fill('Desktop Test Studio');
    await page.getByLabel('Member barcode').fill('M-DESK-1');
    await page
      .getByRole('textbox', { name: 'Category', exact: true })
      .or(page.getByRole('combobox', { name: 'Category', exact: true }))
      .fill('Ceramics');
    await page.getByLabel('Project detail').fill('Made by the desktop end-to-end test.');
    await page.getByRole('button', { name: 'Create portfolio' }).click();
    await expect(page.getByRole('heading', { name: 'Edit “Desktop Test Studio”' })).toBeVisible();
  });

  test('shares on the LAN from Settings and stops again', async () => {
    const port = await freePort();
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Settings' })
      .click();
    await expect(page.getByText('Traffic is plain HTTP')).toBeVisible();
    await page.getByRole('checkbox', { name: 'Share on the LAN' }).check();
    await page.getByLabel('Port').fill(String(port));
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect(page.getByText(`Shared on port ${port}`)).toBeVisible();

    // Another computer would use a LAN address; this one asks the LAN listener directly.
    const lan = await fetch(`http://127.0.0.1:${port}/api/v1/appauth`);
    expect(lan.status).toBe(401);

    await page.getByRole('checkbox', { name: 'Share on the LAN' }).uncheck();
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect(page.getByText('Not shared')).toBeVisible();
    await expect(fetch(`http://127.0.0.1:${port}/api/v1/appauth`)).rejects.toThrow();
  });

  test('keeps navigation inside the app', async () => {
    const before = page.url();
    await page.evaluate(() => {
      window.location.href = 'file:///etc/hosts';
    });
    await page.waitForTimeout(500);
    expect(new URL(page.url()).origin).toBe(new URL(before).origin);
  });
});
