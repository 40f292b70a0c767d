import { readFile } from 'node:fs/promises';
import { type APIRequestContext, type Page, expect, test } from '@playwright/test';
import { ADMIN } from './global-setup';
import { SCREENSHOT_DIR, apiCreatePortfolio, apiSignIn, expectAccessible } from './support';

/**
 * The gallery's multi-select and bulk actions (DESIGN §16): a curator ticks portfolios with the
 * keyboard, publishes them in one action, reads the result in plain words, and undoes it.
 *
 * Named to run after the curator journey, which counts the portfolios of the shared server.
 */

async function signIn(page: Page, path: string) {
  await page.goto(path);
  await page.getByLabel('Username').fill(ADMIN.username);
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

async function publishedOf(request: APIRequestContext, session: string, id: string) {
  const response = await request.get(`/api/v1/portfolio/${id}`, {
    headers: { Authorization: session },
  });
  return ((await response.json()) as { published?: boolean }).published;
}

test('selects two portfolios by keyboard, publishes them, and undoes it', async ({
  page,
  request,
}) => {
  const session = await apiSignIn(request, ADMIN.username, ADMIN.password);
  const category = `Bulk-${Date.now()}`;
  const created = [];
  for (const title of ['Oak bench', 'Pine shelf']) {
    created.push(
      await apiCreatePortfolio(request, session, {
        memberBarcode: `BULK-${title.length}`,
        category,
        projectTitle: title,
        projectDetail: 'Made by hand.',
      }),
    );
  }
  const ids = created.map((one) => one.portfolioId);

  await page.setViewportSize({ width: 390, height: 844 });
  await signIn(page, `/?category=${encodeURIComponent(category)}`);
  await expect(page.getByText('2 portfolios match')).toBeVisible();
  const cards = page.getByRole('region', { name: 'Portfolios' });
  await expect(cards.getByText('Unpublished')).toHaveCount(2);

  // By keyboard: Space ticks a checkbox, Tab moves on (past the card's link) to the next one.
  const boxes = cards.getByRole('checkbox', { name: /^Select (Oak bench|Pine shelf)$/ });
  await expect(boxes).toHaveCount(2);
  await boxes.first().focus();
  await page.keyboard.press('Space');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  await expect(boxes.nth(1)).toBeFocused();
  await page.keyboard.press('Space');
  await expect(boxes.nth(1)).toBeChecked();
  const bar = page.getByRole('region', { name: 'Bulk actions' });
  await expect(bar.getByText('2 selected')).toBeVisible();

  await bar.getByRole('button', { name: 'Publish', exact: true }).focus();
  await page.keyboard.press('Enter');
  await expect(bar.getByRole('status')).toHaveText('2 portfolios changed.');
  await expect(cards.getByText('Unpublished')).toHaveCount(0);
  expect(await publishedOf(request, session, ids[0]!)).toBe(true);
  await expectAccessible(page, 'gallery with the bulk bar');
  await page.screenshot({ path: `${SCREENSHOT_DIR}/bulk-edit-390.png`, animations: 'disabled' });

  await bar.getByRole('button', { name: 'Undo' }).click();
  await expect(bar.getByRole('status')).toHaveText('2 portfolios changed back.');
  await expect(cards.getByText('Unpublished')).toHaveCount(2);
  expect(await publishedOf(request, session, ids[1]!)).toBe(false);
  await expect(bar.getByRole('button', { name: 'Undo' })).toHaveCount(0);

  // The Undo button is gone; the result holds the focus, in the bar, where Escape clears.
  await expect(bar.getByRole('status')).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(bar).toHaveCount(0);
  await expect(page.getByRole('checkbox', { name: 'Select Oak bench' })).not.toBeChecked();
});

test('shift-click selects a range, a selection exports, and all matching are tagged and trashed', async ({
  page,
  request,
}) => {
  const session = await apiSignIn(request, ADMIN.username, ADMIN.password);
  const category = `Range-${Date.now()}`;
  for (const title of ['Ash stool', 'Beech tray', 'Cedar box']) {
    await apiCreatePortfolio(request, session, {
      memberBarcode: 'RANGE-1',
      category,
      projectTitle: title,
      projectDetail: 'Turned on a lathe.',
    });
  }

  await signIn(page, `/?category=${encodeURIComponent(category)}`);
  await expect(page.getByText('3 portfolios match')).toBeVisible();
  const boxes = page.getByRole('region', { name: 'Portfolios' }).getByRole('checkbox');
  await expect(boxes).toHaveCount(3);
  await boxes.nth(0).click();
  await boxes.nth(2).click({ modifiers: ['Shift'] });
  const bar = page.getByRole('region', { name: 'Bulk actions' });
  await expect(bar.getByText('3 selected')).toBeVisible();
  await boxes.nth(1).click();
  await expect(bar.getByText('2 selected')).toBeVisible();

  const download = page.waitForEvent('download');
  await bar.getByRole('button', { name: 'Export CSV of selection' }).click();
  const csv = await readFile((await (await download).path())!, 'utf8');
  expect(csv.slice(1).trim().split('\r\n')).toHaveLength(3);

  await bar.getByRole('button', { name: 'Select all 3 matching' }).click();
  await expect(bar.getByText('3 selected')).toBeVisible();
  await bar.getByRole('button', { name: 'Add tag…' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add a tag' });
  await dialog.getByLabel('Tag to add').fill('lathe-work');
  await dialog.getByRole('button', { name: 'Add tag' }).click();
  await expect(bar.getByRole('status')).toHaveText('3 portfolios changed.');
  const tagged = await request.get(`/api/v1/portfolio?q=lathe-work&filter=category:${category}`, {
    headers: { Authorization: session },
  });
  expect(((await tagged.json()) as { total: number }).total).toBe(3);

  await bar.getByRole('button', { name: 'Move to trash' }).click();
  const confirm = page.getByRole('dialog', { name: 'Move 3 portfolios to the trash?' });
  await expectAccessible(page, 'bulk trash confirmation');
  await confirm.getByRole('button', { name: 'Move to trash' }).click();
  await expect(bar.getByRole('status')).toHaveText('3 portfolios changed.');
  await expect(page.getByText('No portfolios match this search.')).toBeVisible();
  await bar.getByRole('button', { name: 'Undo' }).click();
  await expect(bar.getByRole('status')).toHaveText('3 portfolios changed back.');
  await expect(page.getByText('3 portfolios match')).toBeVisible();
});

test('an editor is told, by title, which portfolios were not theirs to change; a viewer cannot select', async ({
  page,
  request,
}) => {
  const admin = await apiSignIn(request, ADMIN.username, ADMIN.password);
  const stamp = Date.now();
  const editor = { username: `bulk.editor${stamp}`, password: 'bulk-editor-pw1' };
  const created = await request.post('/api/v1/users', {
    data: { ...editor, role: 'editor', allowEdit: [`Mine-${stamp}`] },
    headers: { Authorization: admin },
  });
  expect(created.status(), await created.text()).toBe(201);
  const barcode = `MIX-${stamp}`;
  for (const [title, category] of [
    ['Maple chair', `Mine-${stamp}`],
    ['Walnut desk', `Theirs-${stamp}`],
  ] as const) {
    await apiCreatePortfolio(request, admin, {
      memberBarcode: barcode,
      category,
      projectTitle: title,
      projectDetail: 'Oiled.',
    });
  }

  await page.goto(`/?memberBarcode=${barcode}`);
  await page.getByLabel('Username').fill(editor.username);
  await page.getByLabel('Password').fill(editor.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByText('2 portfolios match')).toBeVisible();
  await page.getByRole('checkbox', { name: 'Select Maple chair' }).check();
  const bar = page.getByRole('region', { name: 'Bulk actions' });
  await bar.getByRole('button', { name: 'Select all 2 matching' }).click();
  // Commands and staff picks are an admin's: an editor is not offered them.
  await expect(bar.getByRole('button', { name: 'Publish', exact: true })).toHaveCount(0);
  await expect(bar.getByRole('button', { name: 'Staff pick' })).toHaveCount(0);

  await bar.getByRole('button', { name: 'Add tag…' }).click();
  await page.getByLabel('Tag to add').fill('oiled');
  await page.getByRole('button', { name: 'Add tag', exact: true }).click();
  await expect(bar.getByRole('status')).toHaveText('1 portfolio changed. 1 not allowed.');
  const unchanged = bar.getByRole('list', { name: 'Left unchanged' });
  await expect(unchanged.getByRole('listitem')).toHaveCount(1);
  await expect(unchanged).toContainText('Walnut desk: You may not edit portfolios in the category');
  await expectAccessible(page, 'bulk result with portfolios left unchanged');
  await page.screenshot({
    path: `${SCREENSHOT_DIR}/bulk-edit-editor-1280.png`,
    animations: 'disabled',
  });

  // A viewer gets no checkboxes and no bar.
  const viewer = { username: `bulk.viewer${stamp}`, password: 'bulk-viewer-pw1' };
  const made = await request.post('/api/v1/users', {
    data: { ...viewer, role: 'viewer' },
    headers: { Authorization: admin },
  });
  expect(made.status(), await made.text()).toBe(201);
  const published = await request.post(`/api/v1/portfolio/bulk`, {
    data: { filter: `memberBarcode:${barcode}`, command: 'publish' },
    headers: { Authorization: admin },
  });
  expect(published.status(), await published.text()).toBe(200);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.goto(`/?memberBarcode=${barcode}`);
  await page.getByLabel('Username').fill(viewer.username);
  await page.getByLabel('Password').fill(viewer.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByText('2 portfolios match')).toBeVisible();
  await expect(page.getByRole('link', { name: 'Maple chair' })).toBeVisible();
  await expect(page.getByRole('checkbox')).toHaveCount(0);
  await expect(page.getByRole('region', { name: 'Bulk actions' })).toHaveCount(0);
});
