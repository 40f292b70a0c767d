import { type APIRequestContext, type Page, expect, test } from '@playwright/test';
import { ADMIN } from './global-setup';
import { SCREENSHOT_DIR, apiCreatePortfolio, apiSignIn, expectAccessible } from './support';

/**
 * The gallery's multi-select and bulk actions (DESIGN §16): a curator ticks portfolios with the
 * keyboard, publishes them in one action, reads the result in plain words, and undoes it.
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

  // Escape in the bar clears the selection, and the bar goes.
  await bar.getByRole('button', { name: 'Clear' }).focus();
  await page.keyboard.press('Escape');
  await expect(bar).toHaveCount(0);
  await expect(page.getByRole('checkbox', { name: 'Select Oak bench' })).not.toBeChecked();
});
