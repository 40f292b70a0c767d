import {
  type APIRequestContext,
  type Browser,
  type BrowserContextOptions,
  expect,
  request as playwrightRequest,
  test,
} from '@playwright/test';
import sharp from 'sharp';
import { ADMIN } from './global-setup';
import { apiCreatePortfolio, apiSignIn, screenshot } from './support';

/** Issue 24, point 14: the phone header, a file's type in words, cards as links, `/` to search. */

// Unique per run: after a failure Playwright starts a new worker, and beforeAll runs again.
const TITLE = `Speckled Stoneware Jug ${Date.now().toString(36)}`;

let api: APIRequestContext;
let portfolioId: string;

test.beforeAll(async ({ baseURL }) => {
  api = await playwrightRequest.newContext({ baseURL });
  const session = await apiSignIn(api, ADMIN.username, ADMIN.password);
  ({ portfolioId } = await apiCreatePortfolio(api, session, {
    projectTitle: TITLE,
    memberBarcode: 'M-JUG-1',
    category: 'Ceramics',
    projectDetail: 'A jug with a JPEG cover.',
  }));
  const jpeg = await sharp({
    create: { width: 64, height: 48, channels: 3, background: { r: 180, g: 120, b: 60 } },
  })
    .jpeg()
    .toBuffer();
  const cover = await api.put(`/api/v1/portfolio/${portfolioId}/cover`, {
    headers: { Authorization: session },
    multipart: { file: { name: 'jug.jpg', mimeType: 'image/jpeg', buffer: jpeg } },
  });
  expect(cover.status(), await cover.text()).toBeLessThan(300);
});

test.afterAll(async () => {
  await api.dispose();
});

async function signedIn(browser: Browser, options: BrowserContextOptions) {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  await page.goto('/');
  await page.getByLabel('Username').fill(ADMIN.username);
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Gallery' })).toBeVisible();
  return { context, page };
}

test('on a 390 px phone the header is one row with a menu button', async ({ browser, baseURL }) => {
  const { context, page } = await signedIn(browser, {
    baseURL,
    viewport: { width: 390, height: 844 },
  });
  const header = page.locator('header.app-header');
  const box = (await header.boundingBox())!;
  // It took a fifth of the screen (169 px); one row is about 50 px.
  expect(box.height).toBeLessThanOrEqual(64);
  const menu = page.getByRole('button', { name: 'Menu' });
  await expect(menu).toHaveAttribute('aria-expanded', 'false');
  await expect(page.getByRole('navigation', { name: 'Main' })).toBeHidden();
  await screenshot(page, 'phone-header-closed');

  await menu.click();
  await expect(menu).toHaveAttribute('aria-expanded', 'true');
  const nav = page.getByRole('navigation', { name: 'Main' });
  await expect(nav).toBeVisible();
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
  await screenshot(page, 'phone-header-open');
  // Going somewhere closes it.
  await nav.getByRole('link', { name: 'Trash' }).click();
  await expect(page.getByRole('heading', { name: 'Trash', level: 1 })).toBeVisible();
  await expect(menu).toHaveAttribute('aria-expanded', 'false');
  await expect(nav).toBeHidden();

  // A wide window shows the navigation itself, and no menu button.
  await page.setViewportSize({ width: 1280, height: 800 });
  await expect(nav).toBeVisible();
  await expect(menu).toBeHidden();
  await context.close();
});

test('a file’s type is shown in words, never as a media type', async ({ browser, baseURL }) => {
  const { context, page } = await signedIn(browser, { baseURL });
  await page.goto(`/portfolios/${portfolioId}`);
  await expect(page.getByRole('heading', { name: TITLE, level: 1 })).toBeVisible();
  await page.getByText('File details').first().click();
  const details = page.locator('.file-details').first();
  await expect(details.locator('dt', { hasText: 'Type' }).locator('+ dd')).toHaveText('JPEG image');
  await expect(page.locator('body')).not.toContainText('image/jpeg');
  await screenshot(page, 'file-type-in-words');
  await context.close();
});

test('Ctrl-click and middle-click on a card open the portfolio in a new tab', async ({
  browser,
  baseURL,
}) => {
  const { context, page } = await signedIn(browser, { baseURL });
  const card = page.getByRole('link', { name: TITLE });
  await expect(card).toHaveAttribute('href', `/portfolios/${portfolioId}`);

  for (const click of [
    () => card.click({ modifiers: ['ControlOrMeta'] }),
    () => card.click({ button: 'middle' }),
  ]) {
    const opened = context.waitForEvent('page');
    await click();
    const tab = await opened;
    await expect(tab.getByRole('heading', { name: TITLE, level: 1 })).toBeVisible();
    await tab.close();
  }
  // The gallery stayed where it was.
  await expect(page.getByRole('heading', { name: 'Gallery' })).toBeVisible();
  await context.close();
});

test('/ focuses the search box, but not while typing in a field', async ({ browser, baseURL }) => {
  const { context, page } = await signedIn(browser, { baseURL });
  const search = page.getByRole('searchbox', { name: 'Search titles, text and tags' });
  await expect(search).toHaveAttribute('aria-keyshortcuts', '/');
  await page.locator('h1').click();
  await page.keyboard.press('/');
  await expect(search).toBeFocused();
  await expect(search).toHaveValue('');
  await page.keyboard.type('jug');
  await expect(search).toHaveValue('jug');

  // In another field, / is a character like any other.
  const category = page.getByLabel('Category', { exact: true });
  await category.fill('');
  await category.focus();
  await page.keyboard.type('a/b');
  await expect(category).toHaveValue('a/b');
  await expect(category).toBeFocused();
  await context.close();
});
