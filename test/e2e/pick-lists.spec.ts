import { type Locator, type Page, expect, test } from '@playwright/test';
import { ADMIN } from './global-setup';
import { apiCreatePortfolio, apiSignIn, expectAccessible, screenshot } from './support';

/**
 * The form and the gallery's filters offer the values already in use (DESIGN §16, facets) as a
 * pick-list, and any other value can still be typed.
 */

async function signIn(page: Page, path: string) {
  await page.goto(path);
  await page.getByLabel('Username').fill(ADMIN.username);
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** The values the input's datalist offers. */
async function offered(page: Page, input: Locator): Promise<string[]> {
  const listId = await input.getAttribute('list');
  expect(listId, 'the field has a pick-list').toBeTruthy();
  return page
    .locator(`datalist[id="${listId}"] option`)
    .evaluateAll((options) => options.map((option) => (option as HTMLOptionElement).value));
}

test('the form and the gallery filter offer a category in use, and a new one can be typed', async ({
  page,
  request,
}) => {
  const session = await apiSignIn(request, ADMIN.username, ADMIN.password);
  await apiCreatePortfolio(request, session, {
    memberBarcode: 'PICK-1',
    category: 'Glassworks',
    projectTitle: 'Blown vase',
    projectDetail: 'A vase.',
    generalTag: ['cobalt'],
  });

  await page.setViewportSize({ width: 390, height: 844 });
  await signIn(page, '/portfolios/new');
  await expect(page.getByRole('heading', { name: 'New portfolio' })).toBeVisible();
  const category = page.getByRole('combobox', { name: 'Category', exact: true });
  await expect.poll(() => offered(page, category)).toContain('Glassworks');
  const tags = page.getByRole('combobox', { name: 'Tags', exact: true });
  await expect.poll(() => offered(page, tags)).toContain('cobalt');
  await category.fill('Brand new category');
  await expect(category).toHaveValue('Brand new category');
  await category.focus();
  await expectAccessible(page, 'new portfolio with pick-lists');
  await screenshot(page, 'pick-lists-form-390');

  await page.goto('/');
  // The gallery first: on a phone its filters sit behind a button that exists only once it shows.
  await expect(page.getByRole('heading', { name: 'Gallery' })).toBeVisible();
  const filters = page.getByRole('button', { name: /filters/i });
  if (await filters.isVisible()) await filters.click();
  const filter = page.getByRole('combobox', { name: 'Category', exact: true });
  await expect.poll(() => offered(page, filter)).toContain('Glassworks');
  await filter.fill('glassworks');
  await expect(page.getByText('1 portfolio match')).toBeVisible();
  await expectAccessible(page, 'gallery with pick-lists');
  await screenshot(page, 'pick-lists-gallery-390');
});
