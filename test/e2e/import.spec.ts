import {
  type APIRequestContext,
  type Page,
  expect,
  request as playwrightRequest,
  test,
} from '@playwright/test';
import { ADMIN, type ServerProcess, startServerProcess } from './server-process';
import {
  apiCreatePortfolio,
  apiSignIn,
  apiUpdatePortfolio,
  expectAccessible,
  screenshot,
} from './support';

/**
 * The Import page (DESIGN §11, issue 27 point 3): a ZIP exported by the app itself
 * (GET /api/v1/export?format=zip) taken from the run's server and imported into a fresh one in
 * Chromium. First the portfolio is added, then the same ZIP changes nothing, then a ZIP with the
 * same field changed on both sides shows its conflict with a link to the portfolio, and a file
 * that is no export ZIP is refused in plain words.
 */
test.describe.configure({ mode: 'serial' });

const CATEGORY = `Import-${Date.now()}`;
const body = (projectDetail: string) => ({
  memberBarcode: 'IM-1',
  category: CATEGORY,
  projectTitle: 'Imported lamp',
  projectDetail,
});

let fresh: ServerProcess;
let sourceApi: APIRequestContext;
let freshApi: APIRequestContext;
let sourceSession: string;
let freshSession: string;
let portfolioId: string;
let page: Page;

async function exportZip(): Promise<Buffer> {
  const response = await sourceApi.get(
    `/api/v1/export?format=zip&ids=${encodeURIComponent(portfolioId)}`,
    { headers: { Authorization: sourceSession } },
  );
  expect(response.status(), await response.text().catch(() => '')).toBe(200);
  return Buffer.from(await response.body());
}

async function importInPage(name: string, buffer: Buffer) {
  await page
    .getByLabel(/Choose a ZIP/)
    .setInputFiles({ name, mimeType: 'application/zip', buffer });
}

test.beforeAll(async ({ browser }) => {
  fresh = await startServerProcess();
  sourceApi = await playwrightRequest.newContext({ baseURL: process.env.E2E_BASE_URL });
  freshApi = await playwrightRequest.newContext({ baseURL: fresh.url });
  sourceSession = await apiSignIn(sourceApi, ADMIN.username, ADMIN.password);
  freshSession = await apiSignIn(freshApi, ADMIN.username, ADMIN.password);
  portfolioId = (await apiCreatePortfolio(sourceApi, sourceSession, body('A brass lamp.')))
    .portfolioId;
  page = await (await browser.newContext({ baseURL: fresh.url })).newPage();
});

test.afterAll(async () => {
  await page?.context().close();
  await sourceApi?.dispose();
  await freshApi?.dispose();
  await fresh?.close();
});

test('a ZIP exported by the app is imported into a fresh library, then again changes nothing', async () => {
  const zip = await exportZip();
  await page.goto('/');
  await page.getByLabel('Username').fill(ADMIN.username);
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('button', { name: 'Sign out', exact: true })).toBeVisible();
  await page.getByRole('link', { name: 'Import ZIP' }).click();
  await expect(page.getByRole('heading', { name: 'Import', level: 1 })).toBeVisible();
  await expectAccessible(page, 'Import page');

  await importInPage('lamp.zip', zip);
  const result = page.getByRole('region', { name: 'lamp.zip was imported' });
  await expect(result).toBeVisible();
  await expect(result.getByText('1 portfolio added')).toBeVisible();
  await expect(result.getByText('0 portfolios already here')).toBeVisible();
  await expectAccessible(page, 'Import report');
  await screenshot(page, 'import-report');

  // The portfolio is in the gallery, with its id.
  const here = await freshApi.get(`/api/v1/portfolio/${portfolioId}`, {
    headers: { Authorization: freshSession },
  });
  expect(here.status()).toBe(200);

  await importInPage('lamp.zip', zip);
  await expect(result.getByText('1 portfolio already here')).toBeVisible();
  await expect(result.getByText('0 portfolios added')).toBeVisible();
});

test('a conflict is shown with a link to the portfolio, where both sides are compared', async () => {
  await apiUpdatePortfolio(sourceApi, sourceSession, portfolioId, body('Brass, from the source.'));
  await apiUpdatePortfolio(freshApi, freshSession, portfolioId, body('Brass, edited here.'));
  await importInPage('lamp-changed.zip', await exportZip());
  const result = page.getByRole('region', { name: 'lamp-changed.zip was imported' });
  await expect(result.getByText('1 portfolio merged')).toBeVisible();
  await expect(result.getByText('1 portfolio with a conflict')).toBeVisible();
  await expectAccessible(page, 'Import report with a conflict');
  await screenshot(page, 'import-conflict', 'screenshot-import.png');
  await result.getByRole('link', { name: portfolioId }).click();
  await expect(page).toHaveURL(new RegExp(`/portfolios/${portfolioId}$`));
  await expect(page.getByText('Brass, from the source.').first()).toBeVisible();
});

test('a file that is no export ZIP is refused in plain words', async () => {
  await page.goto('/import');
  await importInPage('holiday.zip', Buffer.from('these are not the bytes of a ZIP'));
  const result = page.getByRole('region', { name: 'holiday.zip was not imported' });
  await expect(result.getByRole('alert')).toHaveText(
    'The file is not a complete ZIP: it may be cut short or damaged. Export it again.',
  );
  await expectAccessible(page, 'Import refused');
});
