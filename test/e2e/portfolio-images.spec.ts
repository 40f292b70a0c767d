import {
  type APIRequestContext,
  type Browser,
  type BrowserContextOptions,
  expect,
  request as playwrightRequest,
  test,
} from '@playwright/test';
import { ADMIN } from './global-setup';
import { apiCreatePortfolio, apiSignIn, expectAccessible, makePng, screenshot } from './support';

/** Issue 28, point 6: reorder drafting images by keyboard, make one the cover, zoom, describe several. */

const TITLE = `Terrazzo Side Table ${Date.now().toString(36)}`;

let api: APIRequestContext;
let session: string;
let portfolioId: string;

async function upload(path: string, name: string, png: Buffer, method: 'put' | 'post' = 'post') {
  const response = await api[method](`/api/v1/portfolio/${portfolioId}/${path}`, {
    headers: { Authorization: session },
    multipart: { file: { name, mimeType: 'image/png', buffer: png } },
  });
  expect(response.status(), await response.text()).toBeLessThan(300);
}

async function detail() {
  const response = await api.get(
    `/api/v1/portfolio/${portfolioId}?field=cover,draftingProcess,revision`,
    { headers: { Authorization: session } },
  );
  return response.json();
}

test.beforeAll(async ({ baseURL }) => {
  api = await playwrightRequest.newContext({ baseURL });
  session = await apiSignIn(api, ADMIN.username, ADMIN.password);
  ({ portfolioId } = await apiCreatePortfolio(api, session, {
    projectTitle: TITLE,
    memberBarcode: 'M-TABLE-1',
    category: 'Furniture',
    projectDetail: 'A side table in three drafts.',
  }));
  await upload('cover', 'front.png', makePng(400, 300, [30, 60, 120], [200, 220, 240]), 'put');
  await upload('draftingProcess', 'sketch.png', makePng(800, 600, [200, 40, 40], [250, 200, 60]));
  await upload('draftingProcess', 'model.png', makePng(800, 600, [40, 160, 60], [10, 40, 20]));
  await upload('draftingProcess', 'render.png', makePng(800, 600, [90, 40, 160], [230, 210, 250]));
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

const names = async () =>
  (await detail()).draftingProcess.map(
    (file: { originalFilename: string }) => file.originalFilename,
  );

test('drafting images are reordered by keyboard, one made the cover, several described', async ({
  browser,
  baseURL,
}) => {
  const { context, page } = await signedIn(browser, { baseURL });
  await page.goto(`/portfolios/${portfolioId}/edit`);
  const list = page.getByRole('list', { name: 'Drafting process files' });
  await expect(list.getByRole('listitem')).toHaveCount(3);
  const start = (await detail()).revision as number;

  // Alt+↓ on a focused image moves it, announced; focus stays on it.
  await page.getByRole('button', { name: 'Move sketch.png down' }).focus();
  await page.keyboard.press('Alt+ArrowDown');
  await expect(page.getByRole('status').filter({ hasText: 'moved' })).toHaveText(
    'sketch.png moved to position 2 of 3.',
  );
  await expect(page.getByRole('button', { name: 'Move sketch.png down' })).toBeFocused();
  await expect.poll(names).toEqual(['model.png', 'sketch.png', 'render.png']);
  // The Move up button, pressed with the keyboard.
  await page.getByRole('button', { name: 'Move render.png up' }).focus();
  await page.keyboard.press('Enter');
  await expect.poll(names).toEqual(['model.png', 'render.png', 'sketch.png']);
  await expect(list.getByRole('listitem').first()).toContainText('model.png');
  expect((await detail()).revision).toBe(start + 2);

  // Make cover: the old cover takes the image's place.
  await page.getByRole('button', { name: 'Make render.png the cover' }).click();
  await expect(page.getByText('render.png is the cover now')).toBeVisible();
  await expect.poll(names).toEqual(['model.png', 'front.png', 'sketch.png']);
  expect((await detail()).cover.originalFilename).toBe('render.png');
  await expect(list.getByRole('listitem').nth(1)).toContainText('front.png');

  // Describe several: tick two, one description, one change.
  const before = (await detail()).revision as number;
  await page.getByRole('checkbox', { name: 'Select model.png' }).check();
  await page.getByRole('checkbox', { name: 'Select sketch.png' }).check();
  await page.getByLabel('One description for the selected files').fill('Early study, spring');
  await page.getByRole('button', { name: 'Describe 2 files' }).click();
  await expect(page.getByText('The description of 2 files was saved.')).toBeVisible();
  await expect(page.getByLabel('Description of model.png')).toHaveValue('Early study, spring');
  await expect(page.getByLabel('Description of sketch.png')).toHaveValue('Early study, spring');
  const after = await detail();
  expect(after.revision).toBe(before + 1);
  expect(after.draftingProcess.map((file: { description: string }) => file.description)).toEqual([
    'Early study, spring',
    '',
    'Early study, spring',
  ]);
  await expect(page.getByRole('checkbox', { name: 'Select model.png' })).not.toBeChecked();

  // A drag by the handle puts an image where it is dropped.
  const rows = list.getByRole('listitem');
  await rows.nth(2).locator('.drag-handle').dragTo(rows.nth(0));
  await expect.poll(names).toEqual(['sketch.png', 'model.png', 'front.png']);
  await expect(rows.first()).toContainText('sketch.png');

  await expectAccessible(page, 'the edit page with files arranged');
  await screenshot(page, 'portfolio-images-edit');
  await context.close();
});

test('the lightbox zooms by keys and buttons, loads the original, and closes with Escape', async ({
  browser,
  baseURL,
}) => {
  const { context, page } = await signedIn(browser, { baseURL });
  await page.goto(`/portfolios/${portfolioId}`);
  await expect(page.getByRole('button', { name: 'Download render.png' })).toBeVisible();
  await page.getByRole('button', { name: 'Open Early study, spring' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'Drafting process image' });
  await expect(dialog).toBeVisible();
  const image = dialog.getByRole('img', { name: 'Early study, spring' });
  await expect(image).toHaveAttribute('data-full', 'false');
  const level = dialog.getByRole('status', { name: 'Zoom level' });
  await expect(level).toHaveText('100%');

  await page.keyboard.type('+');
  await expect(level).toHaveText('150%');
  // Zoomed: the original file is fetched and shown.
  await expect(image).toHaveAttribute('data-full', 'true');
  await dialog.getByRole('button', { name: 'Zoom in' }).click();
  await expect(level).toHaveText('225%');
  await page.keyboard.press('ArrowLeft');
  await expect(image).toHaveAttribute('style', /translate\(60px, 0px\) scale\(2\.25\)/);
  await page.keyboard.type('-');
  await expect(level).toHaveText('150%');
  await expectAccessible(page, 'the zoomed lightbox');
  await screenshot(page, 'portfolio-images-lightbox');
  await page.keyboard.type('0');
  await expect(level).toHaveText('100%');
  await expect(dialog.getByRole('button', { name: 'Fit to screen' })).toBeDisabled();

  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await context.close();
});

test('on a 390 px phone the file rows and the lightbox fit', async ({ browser, baseURL }) => {
  const { context, page } = await signedIn(browser, {
    baseURL,
    viewport: { width: 390, height: 844 },
  });
  await page.goto(`/portfolios/${portfolioId}/edit`);
  await expect(page.getByRole('button', { name: 'Move model.png up' })).toBeVisible();
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  const wide = await page.evaluate(() =>
    [...document.querySelectorAll('body *')]
      .filter((el) => el.getBoundingClientRect().right > 391)
      .slice(0, 8)
      .map((el) => `${el.tagName}.${el.className} ${Math.round(el.getBoundingClientRect().right)}`),
  );
  expect(overflow, wide.join('\n')).toBeLessThanOrEqual(0);
  await expectAccessible(page, 'the edit page on a phone');
  await screenshot(page, 'portfolio-images-edit-phone');
  await page.goto(`/portfolios/${portfolioId}`);
  await page.getByRole('button', { name: 'Open Early study, spring' }).first().click();
  await page.keyboard.type('+');
  await screenshot(page, 'portfolio-images-lightbox-phone');
  await context.close();
});
