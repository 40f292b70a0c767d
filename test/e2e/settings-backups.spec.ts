import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, request as playwrightRequest, test } from '@playwright/test';
import { ADMIN } from './global-setup';
import { apiCreatePortfolio, apiSignIn, expectAccessible } from './support';

/**
 * Settings → Backups in Chromium against the real server: set the folder, back up, verify. Named
 * to run after the curator journey, which counts the portfolios of the shared server.
 */
test('an admin backs up from Settings and verifies the backup', async ({ page, baseURL }) => {
  const target = await mkdtemp(join(tmpdir(), 'portfolio-e2e-backups-'));
  try {
    const api = await playwrightRequest.newContext({ baseURL });
    const admin = await apiSignIn(api, ADMIN.username, ADMIN.password);
    await apiCreatePortfolio(api, admin, {
      memberBarcode: 'B0001',
      category: 'Interior',
      projectTitle: 'Backed up',
      projectDetail: 'Kept safe.',
    });

    await page.goto('/settings');
    await page.getByLabel('Username').fill(ADMIN.username);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const section = page.getByRole('region', { name: 'Backups' });
    await expect(section).toBeVisible();

    // A relative folder is refused in words; a full path is kept.
    const folder = section.getByLabel('Backup folder');
    await folder.fill('backups');
    await section.getByRole('button', { name: 'Save backup settings' }).click();
    await expect(section.getByRole('alert')).toContainText('full path');
    await folder.fill(target);
    await section.getByLabel('Backups to keep').fill('3');
    await section.getByRole('button', { name: 'Save backup settings' }).click();
    await expect(page.getByText('The backup settings are saved.')).toBeVisible();

    await section.getByRole('button', { name: 'Back up now' }).click();
    const status = section.getByRole('status', { name: 'Backup status' });
    await expect(status).toContainText('Last backup:');
    await expect(status).toContainText(target);
    await expectAccessible(page, 'Settings → Backups');

    await section
      .getByRole('button', { name: /^Verify the backup of/ })
      .first()
      .click();
    await expect(section.getByText(/^Whole: \d+ files checked\.$/)).toBeVisible();
    await api.dispose();
  } finally {
    await rm(target, { recursive: true, force: true });
  }
});
