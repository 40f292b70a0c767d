import { type Page, expect, request as playwrightRequest, test } from '@playwright/test';
import { ADMIN } from './global-setup';
import { apiSignIn } from './support';

/**
 * The Settings page in Chromium against the real server: once as in a LAN browser (no desktop
 * shell), once with a stand-in `window.desktop`, so its LAN and password forms are exercised
 * where no Electron binary exists. desktop-app.spec.ts covers the real shell.
 */

const OWNER = { username: 'settings-owner', password: 'settings-owner-pw1' };

async function signIn(page: Page, username: string, password: string) {
  await page.goto('/settings');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Settings', level: 1 })).toBeVisible();
}

test('in a browser, Settings explains that desktop settings live in the app', async ({ page }) => {
  await signIn(page, ADMIN.username, ADMIN.password);
  await expect(page.getByText('You are using Portfolio Manager in a web browser')).toBeVisible();
  await expect(page.getByRole('checkbox', { name: 'Share on the LAN' })).toHaveCount(0);
});

test('with the desktop bridge, Settings shares on the LAN and sets the owner password', async ({
  page,
  baseURL,
}) => {
  const api = await playwrightRequest.newContext({ baseURL });
  const admin = await apiSignIn(api, ADMIN.username, ADMIN.password);
  const created = await api.post('/api/v1/users', {
    data: { ...OWNER, role: 'admin', allowEdit: ['*'] },
    headers: { Authorization: admin },
  });
  expect(created.status(), await created.text()).toBe(201);

  // A stand-in for the preload: LAN state in the page, the owner's session from a real sign-in.
  await page.addInitScript((owner) => {
    let lan = {
      enabled: false,
      port: 8080,
      listening: false,
      addresses: [] as unknown[],
      error: null as string | null,
    };
    const desktop = {
      getSession: async () => null,
      getServerInfo: async () => ({
        origin: location.origin,
        dataDir: '/home/ann/Portfolio/data',
        ownerUsername: owner,
      }),
      getLanStatus: async () => lan,
      setLanSharing: async ({ enabled, port }: { enabled: boolean; port: number }) => {
        if (enabled && port === 9999)
          return {
            ...lan,
            error: 'Port 9999 is already in use by another program. Choose another port.',
          };
        lan = enabled
          ? {
              enabled,
              port,
              listening: true,
              addresses: [
                {
                  interfaceName: 'eth0',
                  address: '192.168.1.20',
                  url: `http://192.168.1.20:${port}/`,
                },
              ],
              error: null,
            }
          : { enabled, port, listening: false, addresses: [], error: null };
        return lan;
      },
      openDataFolder: async () => undefined,
      getVersion: async () => '0.1.0',
      getVersions: async () => ({ app: '0.1.0', electron: '38.8.6', chrome: '140', node: '22' }),
    };
    Object.defineProperty(window, 'desktop', { value: desktop });
  }, OWNER.username);

  await signIn(page, OWNER.username, OWNER.password);
  await expect(page.getByText('Traffic is plain HTTP')).toBeVisible();
  await expect(page.getByText('Not shared')).toBeVisible();

  await page.getByRole('checkbox', { name: 'Share on the LAN' }).check();
  await page.getByLabel('Port').fill('80');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(page.getByText('Enter a whole number from 1024 to 65535.')).toBeVisible();

  await page.getByLabel('Port').fill('9999');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(page.getByRole('alert')).toContainText('Port 9999 is already in use');

  await page.getByLabel('Port').fill('8123');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(page.getByText('Shared on port 8123')).toBeVisible();
  await expect(page.getByRole('list', { name: 'LAN addresses' })).toContainText(
    'http://192.168.1.20:8123/',
  );

  await page.getByRole('checkbox', { name: 'Share on the LAN' }).uncheck();
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(page.getByText('Not shared')).toBeVisible();

  await expect(page.getByText('/home/ann/Portfolio/data')).toBeVisible();

  await page.getByLabel('New password').fill('short');
  await page.getByRole('button', { name: 'Set password' }).click();
  await expect(page.getByText('Use at least 8 characters.')).toBeVisible();
  await page.getByLabel('New password').fill('a brand new owner pw');
  await page.getByLabel('Repeat the password').fill('a brand new owner pw');
  await page.getByRole('button', { name: 'Set password' }).click();
  await expect(page.getByText('The owner password is set.')).toBeVisible();
  // The new password works for signing in (from "another computer").
  await apiSignIn(api, OWNER.username, 'a brand new owner pw');
  await api.dispose();
});
