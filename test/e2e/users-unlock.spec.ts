import { expect, request as playwrightRequest, test } from '@playwright/test';
import { ADMIN } from './global-setup';
import { apiSignIn } from './support';

/**
 * Five wrong passwords lock a user out; the lockout reads in minutes, and an admin ends it from
 * the Users screen (issue 24, point 11).
 */

const LOCKED = { username: 'locked.curator', password: 'locked-curator-pw1' };

test('an admin unlocks a user locked out by wrong passwords', async ({ page, baseURL }) => {
  const api = await playwrightRequest.newContext({ baseURL });
  const admin = await apiSignIn(api, ADMIN.username, ADMIN.password);
  const created = await api.post('/api/v1/users', {
    data: { ...LOCKED, role: 'viewer' },
    headers: { Authorization: admin },
  });
  expect(created.status(), await created.text()).toBe(201);
  for (let i = 0; i < 5; i++) {
    const wrong = await api.post('/api/v1/appauth', {
      data: { username: LOCKED.username, password: 'not-the-password' },
    });
    expect(wrong.status()).toBe(401);
  }

  // The locked user sees how long, in minutes.
  await page.goto('/');
  await page.getByLabel('Username').fill(LOCKED.username);
  await page.getByLabel('Password').fill(LOCKED.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert')).toContainText('try again in 15 minutes');
  await expect(page.getByRole('alert')).not.toContainText('seconds');

  // The admin unlocks them on the Users screen.
  await page.goto('/users');
  await page.getByLabel('Username').fill(ADMIN.username);
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: `Unlock ${LOCKED.username}` }).click();
  await expect(
    page.getByText(`${LOCKED.username} is unlocked and can sign in again now.`),
  ).toBeVisible();

  expect((await api.post('/api/v1/appauth', { data: LOCKED })).status()).toBe(200);
  await api.dispose();
});
