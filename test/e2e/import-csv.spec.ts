import { type Page, expect, test } from '@playwright/test';
import { ADMIN, type ServerProcess, startServerProcess } from './server-process';
import { expectAccessible, screenshot } from './support';

/**
 * CSV import on the Import page (DESIGN §16), on a fresh server of its own (the shared one's
 * portfolio count belongs to the curator journey): a spreadsheet whose columns are not named like
 * the fields is mapped by keyboard, with its first rows previewed; the dry run lists each row in
 * plain words and changes nothing; the import adds the good row; the mapping is remembered for
 * the next file with the same header; at 390 px it still reads.
 *
 * Named to run after the curator journey, which counts the portfolios of the shared server.
 */
test.describe.configure({ mode: 'serial' });

const CSV =
  '\uFEFFBarcode;Category;Project title;Project detail;Tags\r\n' +
  'CSV-1;Furniture;Chêne table;"Oak, two lines:\nsecond";"oak; table"\r\n' +
  'CSV-2;Furniture;;No title here;\r\n';

let server: ServerProcess;
let page: Page;

async function chooseCsv() {
  await page
    .getByLabel(/Choose a CSV/)
    .setInputFiles({ name: 'members.csv', mimeType: 'text/csv', buffer: Buffer.from(CSV) });
}

test.beforeAll(async ({ browser }) => {
  server = await startServerProcess();
  page = await (await browser.newContext({ baseURL: server.url })).newPage();
});

test.afterAll(async () => {
  await page?.context().close();
  await server?.close();
});

test('columns are mapped by keyboard, checked in a dry run, then imported', async () => {
  await page.goto('/');
  await page.getByLabel('Username').fill(ADMIN.username);
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('button', { name: 'Sign out', exact: true })).toBeVisible();
  await page.goto('/import');
  await chooseCsv();

  // The mapping screen takes the focus; headers named like fields are mapped already.
  const heading = page.getByRole('heading', { name: 'Columns of members.csv' });
  await expect(heading).toBeFocused();
  await expect(page.getByLabel('Project title', { exact: true })).toHaveValue('projectTitle');
  const barcode = page.getByLabel('Barcode', { exact: true });
  await expect(barcode).toHaveValue('');
  await expect(page.getByRole('alert')).toContainText('Choose a column for Member barcode');

  // By keyboard: Tab to the first column's choice, then type the field's name.
  await page.keyboard.press('Tab');
  await expect(barcode).toBeFocused();
  await page.keyboard.type('Member barcode');
  await expect(barcode).toHaveValue('memberBarcode');
  const preview = page.getByRole('region', { name: 'First rows, as they will be imported' });
  await expect(preview.getByRole('columnheader', { name: 'Member barcode' })).toBeVisible();
  await expect(preview.getByRole('cell', { name: 'Chêne table' })).toBeVisible();
  await expectAccessible(page, 'CSV mapping');
  await screenshot(page, 'csv-mapping');

  const check = page.getByRole('button', { name: 'Check the rows' });
  await check.focus();
  await page.keyboard.press('Enter');
  const report = page.getByRole('region', { name: 'Check of 2 rows: nothing was changed' });
  await expect(report.getByText('1 portfolio will be added')).toBeVisible();
  await expect(report.getByText(/Row 2: will not be imported — Project title:/)).toBeVisible();
  await expectAccessible(page, 'CSV dry run report');

  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'csv-report-phone');
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(width).toBeLessThanOrEqual(390);
  await page.setViewportSize({ width: 1280, height: 860 });

  await report.getByRole('button', { name: /Import now/ }).focus();
  await page.keyboard.press('Enter');
  const done = page.getByRole('region', { name: 'Imported' });
  await expect(done.getByText('1 portfolio added')).toBeVisible();
  await expect(done.getByText('1 row not imported')).toBeVisible();
  await screenshot(page, 'csv-imported');

  // The same header again: the mapping chosen by hand is remembered.
  await page.reload();
  await chooseCsv();
  await expect(page.getByLabel('Barcode', { exact: true })).toHaveValue('memberBarcode');
  await page.getByRole('button', { name: 'Check the rows' }).click();
  await expect(page.getByText('1 row already up to date')).toBeVisible();
});
