import { type Page, expect, request as playwrightRequest, test } from '@playwright/test';
import { ADMIN } from './global-setup';
import { apiCreatePortfolio, apiSignIn } from './support';

/**
 * A link to a page deep inside the app, opened in a new tab and reloaded: the server answers
 * the route with index.html, and index.html must name its scripts by absolute URL, or the
 * browser asks for /portfolios/assets/… and the page stays blank.
 */

const TITLE = 'Deep Link Pottery';

let portfolioId: string;

test.beforeAll(async ({ baseURL }) => {
  const api = await playwrightRequest.newContext({ baseURL });
  const session = await apiSignIn(api, ADMIN.username, ADMIN.password);
  ({ portfolioId } = await apiCreatePortfolio(api, session, {
    projectTitle: TITLE,
    memberBarcode: 'M-DEEP-1',
    category: 'Ceramics',
    projectDetail: 'Opened straight from a bookmark.',
  }));
  await api.dispose();
});

/** Every script and stylesheet the page asked for, with the status it got. */
function watchAssets(page: Page): { url: string; status: number }[] {
  const seen: { url: string; status: number }[] = [];
  page.on('response', (response) => {
    const type = response.request().resourceType();
    if (type === 'script' || type === 'stylesheet')
      seen.push({ url: new URL(response.url()).pathname, status: response.status() });
  });
  return seen;
}

test('a deep link opens the page directly, and again after a reload', async ({ page }) => {
  const assets = watchAssets(page);
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));

  await page.goto(`/portfolios/${portfolioId}`);
  // The app ran: it shows its sign-in form on the deep route, and goes on to the page after it.
  await page.getByLabel('Username').fill(ADMIN.username);
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: TITLE, level: 1 })).toBeVisible();
  expect(new URL(page.url()).pathname).toBe(`/portfolios/${portfolioId}`);

  await page.reload();
  await expect(page.getByRole('heading', { name: TITLE, level: 1 })).toBeVisible();

  // A deeper route, opened fresh: the edit form of the same portfolio.
  await page.goto(`/portfolios/${portfolioId}/edit`);
  await expect(page.getByRole('heading', { name: `Edit “${TITLE}”` })).toBeVisible();

  expect(assets.length).toBeGreaterThanOrEqual(2);
  for (const asset of assets) {
    expect(asset.url, 'assets load from the root').toMatch(/^\/assets\//);
    expect(asset.status, asset.url).toBeLessThan(400);
  }
  expect(errors).toEqual([]);
});

test('a missing asset under a deep path is a 404, never the HTML page', async ({ request }) => {
  for (const path of [
    '/portfolios/assets/index-missing.js',
    '/portfolios/abc/assets/index-missing.css',
    '/assets/index-missing.js',
  ]) {
    // Even a client that says it accepts HTML gets no index.html in place of a script.
    const response = await request.get(path, { headers: { Accept: 'text/html,*/*' } });
    expect(response.status(), path).toBe(404);
    expect(response.headers()['content-type'], path).not.toContain('text/html');
  }
  // A client route that merely contains the word stays a route.
  const route = await request.get('/portfolios/assets/edit', { headers: { Accept: 'text/html' } });
  expect(route.status()).toBe(200);
  expect(route.headers()['content-type']).toContain('text/html');
});
