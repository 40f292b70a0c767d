import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type APIRequestContext,
  type Browser,
  type Page,
  expect,
  request as playwrightRequest,
  test,
} from '@playwright/test';
import { ADMIN } from './global-setup';
import { apiCreatePortfolio, apiSignIn, screenshot } from './support';

/**
 * DESIGN §2, issue 24 point 9: the web UI's session is an HttpOnly cookie that every tab shares;
 * changes made with the cookie alone need X-Portfolio-Client, which a cross-site form cannot send.
 * And point 8: the create form offers a limited editor only her categories.
 */

// Unique per run: after a failure Playwright starts a new worker, and beforeAll runs again.
const TITLE = `Two Tabs Teapot ${Date.now().toString(36)}`;
const EDITOR = { username: 'ceramics-editor', password: 'ceramics-editor-pw' };

let api: APIRequestContext;
let adminSession: string;
let portfolioId: string;

test.beforeAll(async ({ baseURL }) => {
  api = await playwrightRequest.newContext({ baseURL });
  adminSession = await apiSignIn(api, ADMIN.username, ADMIN.password);
  ({ portfolioId } = await apiCreatePortfolio(api, adminSession, {
    projectTitle: TITLE,
    memberBarcode: 'M-TABS-1',
    category: 'Ceramics',
    projectDetail: 'Seen from two tabs at once.',
  }));
  const created = await api.post('/api/v1/users', {
    headers: { Authorization: adminSession },
    data: { ...EDITOR, role: 'editor', allowEdit: ['Ceramics', 'Glass'] },
  });
  // 409: a retry of this file after a failure finds her made already.
  expect([201, 409], await created.text()).toContain(created.status());
});

test.afterAll(async () => {
  await api.dispose();
});

async function signIn(page: Page, user: { username: string; password: string }) {
  await page.getByLabel('Username').fill(user.username);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** A browser window of its own (cookies and all), signed in as the admin on its first tab. */
async function signedInWindow(browser: Browser, baseURL: string | undefined) {
  const context = await browser.newContext({ baseURL });
  const first = await context.newPage();
  await first.goto('/');
  await signIn(first, ADMIN);
  await expect(first.getByRole('heading', { name: 'Gallery' })).toBeVisible();
  return { context, first };
}

/** How many portfolios carry this title, asked with the admin's header. */
async function countTitled(title: string): Promise<number> {
  const response = await api.get(`/api/v1/portfolio?q=${encodeURIComponent(title)}`, {
    headers: { Authorization: adminSession },
  });
  expect(response.status()).toBe(200);
  return ((await response.json()) as { lists: unknown[] }).lists.length;
}

test('a second tab and a typed address are signed in already', async ({ browser, baseURL }) => {
  const { context, first } = await signedInWindow(browser, baseURL);
  const second = await context.newPage();
  await second.goto(`/portfolios/${portfolioId}`);
  await expect(second.getByRole('heading', { name: TITLE, level: 1 })).toBeVisible();
  await expect(second.getByLabel('Username')).toHaveCount(0);
  await screenshot(second, 'web-session-second-tab');
  // The first tab is still in, and no script can see the session.
  await first.reload();
  await expect(first.getByRole('heading', { name: 'Gallery' })).toBeVisible();
  expect(await second.evaluate(() => document.cookie)).toBe('');
  await context.close();
});

test('signing out in one tab asks the other to sign in', async ({ browser, baseURL }) => {
  const { context, first } = await signedInWindow(browser, baseURL);
  const second = await context.newPage();
  await second.goto(`/portfolios/${portfolioId}`);
  await expect(second.getByRole('heading', { name: TITLE, level: 1 })).toBeVisible();

  await first.getByRole('button', { name: 'Sign out' }).click();
  await expect(first.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  // The other tab hears of it at once, and a reload does not bring the session back.
  await expect(second.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  await expect(second.getByText('You signed out in another tab.')).toBeVisible();
  await screenshot(second, 'web-session-signed-out-elsewhere');
  await second.reload();
  await expect(second.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  expect((await context.cookies()).filter((c) => c.name.startsWith('portfolio_session'))).toEqual(
    [],
  );

  // Signing in again in one tab lets the other in too.
  await signIn(second, ADMIN);
  await expect(second.getByRole('heading', { name: TITLE, level: 1 })).toBeVisible();
  await expect(first.getByRole('heading', { name: 'Gallery' })).toBeVisible();
  await context.close();
});

test('a form on another site cannot use the cookie to change anything', async ({
  browser,
  baseURL,
}) => {
  const { context, first } = await signedInWindow(browser, baseURL);
  const api = new URL(baseURL!);
  const forged = 'Forged By Another Site';
  // Another port of the same host: SameSite counts it as the same site and sends the cookie.
  const attacker: Server = createServer((_request, response) => {
    response.setHeader('content-type', 'text/html');
    response.end(`<!doctype html><title>Win a prize</title>
      <form id="f" method="post" enctype="text/plain"
            action="${api.origin}/api/v1/portfolio">
        <input name='{"projectTitle":"${forged}","memberBarcode":"M-EVIL","category":"Evil","projectDetail":"x","pad":"'
               value='"}'>
      </form>
      <script>document.getElementById('f').submit()</script>`);
  });
  await new Promise<void>((resolve) => attacker.listen(0, api.hostname, resolve));
  try {
    const port = (attacker.address() as AddressInfo).port;
    const evil = await context.newPage();
    const answer = evil.waitForResponse((response) => response.url().endsWith('/api/v1/portfolio'));
    await evil.goto(`http://${api.hostname}:${port}/`);
    const refused = await answer;
    expect((await refused.request().allHeaders()).cookie ?? '').toMatch(/portfolio_session_\d+=/);
    expect(refused.status()).toBe(403);
    expect(((await refused.json()) as { code: string }).code).toBe('CLIENT_HEADER_REQUIRED');
    await screenshot(evil, 'web-session-cross-site-form');
  } finally {
    await new Promise((resolve) => attacker.close(resolve));
  }

  // Nor can a script on the app's own origin that leaves the header out; the app's own does.
  const statuses = await first.evaluate(async (title) => {
    const send = (headers: Record<string, string>) =>
      fetch('/api/v1/portfolio', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({
          projectTitle: title,
          memberBarcode: 'M-FETCH',
          category: 'Ceramics',
          projectDetail: 'x',
        }),
      }).then((response) => response.status);
    return [await send({}), await send({ 'X-Portfolio-Client': 'web' })];
  }, 'Fetched With The Cookie');
  expect(statuses).toEqual([403, 201]);
  expect(await countTitled(forged)).toBe(0);
  await context.close();
});

test('the create form offers a limited editor only the categories she may edit', async ({
  browser,
  baseURL,
}) => {
  const context = await browser.newContext({ baseURL });
  const page = await context.newPage();
  await page.goto('/portfolios/new');
  await signIn(page, EDITOR);
  await expect(page.getByRole('heading', { name: 'New portfolio' })).toBeVisible();
  const category = page.getByRole('combobox', { name: 'Category' });
  await expect(category).toBeVisible();
  const options = await category.locator('option').allTextContents();
  expect(options).toEqual(['Choose a category', 'Ceramics', 'Glass']);
  await screenshot(page, 'create-form-limited-editor');

  await page.getByLabel('Project title').fill('Glass Bowl Of Her Own');
  await page.getByLabel('Member barcode').fill('M-GLASS-1');
  await category.selectOption('Glass');
  await page.getByLabel('Project detail').fill('A bowl she may edit after making it.');
  await page.getByRole('button', { name: 'Create portfolio' }).click();
  await expect(page.getByRole('heading', { name: /Edit “Glass Bowl Of Her Own”/ })).toBeVisible();
  await context.close();
});
