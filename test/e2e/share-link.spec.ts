import { expect, request as playwrightRequest, test } from '@playwright/test';
import { ADMIN } from './global-setup';
import { apiCreatePortfolio, apiSignIn, expectAccessible, screenshot } from './support';

/**
 * Share links (DESIGN §15): a curator makes a link for an unpublished portfolio on its page, and
 * someone without an account opens it in a fresh browser and sees the portfolio, read-only.
 */
test('makes a share link on the portfolio page that opens the portfolio for anyone', async ({
  page,
  browser,
}) => {
  const api = await playwrightRequest.newContext({ baseURL: process.env.E2E_BASE_URL });
  const session = await apiSignIn(api, ADMIN.username, ADMIN.password);
  const created = await apiCreatePortfolio(api, session, {
    memberBarcode: 'SHARE-SECRET-1',
    category: 'Ceramics',
    projectTitle: 'Shared glaze study',
    projectDetail: 'Twelve test tiles in ash glaze.',
    generalTag: ['glaze', 'tiles'],
  });
  await api.dispose();

  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`/portfolios/${created.portfolioId}`);
  await page.getByLabel('Username').fill(ADMIN.username);
  await page.getByLabel('Password', { exact: true }).fill(ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const panel = page.getByRole('region', { name: 'Share links' });
  await expect(panel.getByText('No share links yet.')).toBeVisible();

  await panel.getByLabel('Most opens (optional)').fill('5');
  await panel.getByRole('button', { name: 'Make link' }).click();
  const link = panel.getByLabel(/New link/);
  await expect(link).toHaveValue(/\/s\/[A-Za-z0-9_-]{43}$/);
  await expect(panel.getByText('Active · 0 of 5 uses · No password')).toBeVisible();
  await expect(panel.getByRole('button', { name: 'Copy' })).toBeVisible();
  await expectAccessible(page, 'portfolio page with share links');
  await screenshot(page, 'share-panel-390');
  const url = await link.inputValue();

  // Someone else, with no session and no cookies of the app.
  const stranger = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const visitor = await stranger.newPage();
  const answer = await visitor.goto(url);
  expect(answer?.status()).toBe(200);
  await expect(visitor.getByRole('heading', { level: 1 })).toHaveText('Shared glaze study');
  await expect(visitor.getByText('Twelve test tiles in ash glaze.')).toBeVisible();
  await expect(visitor.getByText('SHARE-SECRET-1')).toHaveCount(0);
  await expectAccessible(visitor, 'share page');
  await screenshot(visitor, 'share-page-390');
  await stranger.close();

  // The open was counted; revoking ends the link.
  await page.reload();
  await expect(panel.getByText('Active · 1 of 5 uses · No password')).toBeVisible();
  await panel.getByRole('button', { name: /^Revoke the link made/ }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Revoke link' }).click();
  await expect(panel.getByText('No share links yet.')).toBeVisible();
  const after = await browser.newContext();
  const gone = await (await after.newPage()).goto(url);
  expect(gone?.status()).toBe(410);
  await after.close();
});
