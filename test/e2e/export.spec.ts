import { readFile } from 'node:fs/promises';
import { expect, request as playwrightRequest, test } from '@playwright/test';
import { ADMIN } from './global-setup';
import { apiCreatePortfolio, apiSignIn } from './support';

/**
 * The gallery's Export (DESIGN §11): a curator filters the gallery and saves what it shows as a
 * CSV a spreadsheet opens, and as a ZIP for another library.
 */
test('exports what the gallery shows as a CSV and a ZIP', async ({ page }) => {
  const api = await playwrightRequest.newContext({ baseURL: process.env.E2E_BASE_URL });
  const session = await apiSignIn(api, ADMIN.username, ADMIN.password);
  const category = `Export-${Date.now()}`;
  await apiCreatePortfolio(api, session, {
    memberBarcode: 'EX-1',
    category,
    projectTitle: '=SUM(A1) Exported bowl',
    projectDetail: 'A bowl, exported.',
  });

  await page.goto(`/?category=${encodeURIComponent(category)}`);
  await page.getByLabel('Username').fill(ADMIN.username);
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
  await expect(page.getByRole('status').filter({ hasText: '1 portfolio match' })).toBeVisible();

  const csvDownload = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export CSV' }).click();
  const csv = await csvDownload;
  expect(csv.suggestedFilename()).toMatch(/^portfolios-.*\.csv$/);
  const text = await readFile((await csv.path())!, 'utf8');
  expect(text.charCodeAt(0)).toBe(0xfeff);
  const lines = text.slice(1).trim().split('\r\n');
  expect(lines).toHaveLength(2);
  expect(lines[1]).toContain("'=SUM(A1) Exported bowl");

  const zipDownload = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export ZIP' }).click();
  const zip = await zipDownload;
  expect(zip.suggestedFilename()).toMatch(/^portfolios-.*\.zip$/);
  const bytes = await readFile((await zip.path())!);
  expect(bytes.subarray(0, 2).toString('latin1')).toBe('PK');
  await api.dispose();
});
