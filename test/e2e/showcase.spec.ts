import { expect, request as playwrightRequest, test, type Page } from '@playwright/test';
import { ADMIN } from './global-setup';
import {
  apiCreatePortfolio,
  apiSignIn,
  apiUpdatePortfolio,
  apiUploadCover,
  expectAccessible,
  makePng,
  screenshot,
} from './support';

/** Every request the page makes, and every console error it logs. */
function watch(page: Page) {
  const requests: string[] = [];
  const errors: string[] = [];
  const failed: string[] = [];
  page.on('request', (request) => requests.push(new URL(request.url()).pathname));
  page.on('response', (response) => {
    if (response.status() >= 400) failed.push(new URL(response.url()).pathname);
  });
  page.on('console', (message) => {
    // A failed load is reported by URL below (the browser's own /favicon.ico lookup is one).
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return { requests, errors, failed };
}

/**
 * The public showcase in Chromium: an admin turns it on under Settings → Showcase, and a visitor
 * (no session) reads the gallery and a portfolio on a phone and on a desktop.
 */
test('a visitor reads the showcase an admin turned on', async ({ page, browser, baseURL }) => {
  const api = await playwrightRequest.newContext({ baseURL });
  const admin = await apiSignIn(api, ADMIN.username, ADMIN.password);
  const body = {
    memberBarcode: 'S0001',
    category: 'Landscape',
    projectTitle: 'Garden of stones',
    projectDetail: 'Granite, moss and water.\n\nBuilt over two summers.',
    relativeCategory: ['Gardens'],
    generalTag: ['stone', 'water'],
  };
  const { portfolioId } = await apiCreatePortfolio(api, admin, body);
  await apiUploadCover(
    api,
    admin,
    portfolioId,
    'stones.png',
    makePng(1600, 1000, [60, 90, 70], [200, 190, 160]),
  );
  await apiUpdatePortfolio(api, admin, portfolioId, { ...body, command: 'publish' });

  await page.goto('/settings');
  await page.getByLabel('Username').fill(ADMIN.username);
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const section = page.getByRole('region', { name: 'Showcase' });
  await expect(section).toBeVisible();
  await section.getByLabel('Show the showcase to everyone').check();
  await section.getByRole('textbox', { name: /^Title/ }).fill('Studio showcase');
  await section
    .getByRole('textbox', { name: /^Introduction/ })
    .fill('Work our members are proud of.');
  await section.getByRole('button', { name: 'Save showcase settings' }).click();
  await expect(page.getByText('The showcase is on.')).toBeVisible();
  await expectAccessible(page, 'Settings → Showcase');

  for (const [width, height, name] of [
    [1280, 860, 'desktop'],
    [390, 844, 'phone'],
  ] as const) {
    const visitor = await browser.newContext({
      viewport: { width, height },
      bypassCSP: true,
    });
    const tab = await visitor.newPage();
    const seen = watch(tab);
    await tab.goto('/showcase');
    await expect(tab.getByRole('heading', { level: 1, name: 'Studio showcase' })).toBeVisible();
    await expect(tab.getByRole('link', { name: /Garden of stones/ })).toBeVisible();
    await expect(tab.locator('meta[property="og:title"]')).toHaveAttribute(
      'content',
      'Studio showcase',
    );
    await tab.locator('.card img').first().scrollIntoViewIfNeeded();
    await screenshot(tab, `showcase-gallery-${name}`);
    await expectAccessible(tab, `showcase gallery (${name})`);

    await tab.getByRole('link', { name: /Garden of stones/ }).click();
    await expect(tab.getByRole('heading', { level: 1, name: 'Garden of stones' })).toBeVisible();
    await expect(tab.locator('meta[property="og:image"]')).toHaveAttribute(
      'content',
      /\/showcase\/media\//,
    );
    await expect(tab.locator('meta[name="twitter:card"]')).toHaveAttribute(
      'content',
      'summary_large_image',
    );
    await expect(tab.getByText('S0001')).toHaveCount(0);
    const cover = tab.locator('figure.cover img');
    await expect
      .poll(() => cover.evaluate((img: HTMLImageElement) => img.naturalWidth))
      .toBeGreaterThan(0);
    await screenshot(tab, `showcase-portfolio-${name}`);
    await expectAccessible(tab, `showcase portfolio (${name})`);

    expect(seen.errors).toEqual([]);
    expect(seen.failed.filter((path) => path !== '/favicon.ico')).toEqual([]);
    expect(seen.requests.filter((path) => !path.startsWith('/showcase'))).toEqual([]);
    await visitor.close();
  }

  // Off again: the other specs share this server.
  await api.put('/api/v1/settings/showcase', {
    headers: { Authorization: admin },
    data: { enabled: false, title: 'Studio showcase', intro: '' },
  });
  expect((await api.get('/showcase')).status()).toBe(404);
  await api.dispose();
});
