import { type Page, expect, test } from '@playwright/test';
import { ADMIN } from './global-setup';

/**
 * A text longer than its field's limit is kept whole (never cut), counted as one types, and
 * refused on save with a message next to the field (issue 24, point 10).
 */

async function signIn(page: Page) {
  await page.goto('/portfolios/new');
  await page.getByLabel('Username').fill(ADMIN.username);
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'New portfolio' })).toBeVisible();
}

test('a title and a detail over their limits are counted, kept whole and refused on save', async ({
  page,
}) => {
  await signIn(page);
  const title = page.getByLabel('Project title');
  await expect(page.getByText('0 / 200', { exact: true })).toBeVisible();
  await title.fill('a'.repeat(180));
  await expect(page.getByText('180 / 200', { exact: true })).toBeVisible();

  const longTitle = 'word '.repeat(1000).trim();
  await title.fill(longTitle);
  expect(await title.inputValue()).toBe(longTitle);
  await expect(page.getByText('4,999 / 200', { exact: true })).toBeVisible();
  await expect(
    page.getByText('Project title holds at most 200 characters; remove 4,799 to save.'),
  ).toBeVisible();
  await expect(title).toHaveAttribute('aria-invalid', 'true');

  const detail = page.getByLabel('Project detail');
  const longDetail = 'pottery '.repeat(3000);
  await detail.fill(longDetail);
  expect(await detail.inputValue()).toHaveLength(longDetail.length);
  await expect(page.getByText('24,000 / 20,000', { exact: true })).toBeVisible();

  await page.getByLabel('Member barcode').fill('LIMIT-1');
  await page
    .getByRole('textbox', { name: 'Category', exact: true })
    .or(page.getByRole('combobox', { name: 'Category', exact: true }))
    .fill('Ceramics');
  let posted = false;
  page.on('request', (request) => {
    if (request.method() === 'POST' && request.url().endsWith('/api/v1/portfolio')) posted = true;
  });
  await page.getByRole('button', { name: 'Create portfolio' }).click();
  await expect(page.getByText('2 fields need attention.')).toBeVisible();
  await expect(title).toBeFocused();
  await expect(page.getByRole('heading', { name: 'New portfolio' })).toBeVisible();
  expect(posted).toBe(false);
  // Nothing was cut while refusing.
  expect(await title.inputValue()).toBe(longTitle);
  expect(await detail.inputValue()).toHaveLength(longDetail.length);

  await title.fill(longTitle.slice(0, 200));
  await expect(page.getByText('200 / 200', { exact: true })).toBeVisible();
  await expect(page.getByText(/Project title holds at most/)).toHaveCount(0);
});
