import { copyFile, mkdir } from 'node:fs/promises';
import {
  type APIRequestContext,
  type Page,
  expect,
  request as playwrightRequest,
  test,
} from '@playwright/test';
import { ADMIN } from './global-setup';
import {
  apiCreatePortfolio,
  apiSignIn,
  apiUpdatePortfolio,
  apiUploadCover,
  expectAccessible,
  makePdf,
  makePng,
  SCREENSHOT_DIR,
  screenshot,
} from './support';

/**
 * History and Trash (DESIGN §9), step by step against the real server: a colleague works on a
 * portfolio, the admin edits it twice in the UI, compares, restores (once after a conflict),
 * deletes, undoes, deletes again and restores from the Trash.
 */
test.describe.configure({ mode: 'serial' });

const TITLE = 'Lakeside Glass Studio';
const NEW_TITLE = 'Lakeside Glass Studio & Workshop';
const CATEGORY = 'Glassware';
const BARCODE = 'G-2024-007';
const DETAIL = 'Blown glass vessels, made in a lakeside studio.';
const EDITOR = { username: 'glass-editor', password: 'glass-editor-password' };
const VIEWER = { username: 'glass-viewer', password: 'glass-viewer-password' };
/** An editor of another category: may read the history, not restore or delete. */
const OUTSIDER = { username: 'lamp-editor', password: 'lamp-editor-password' };
const OTHER_TITLE = 'Discontinued Bottle Range';

let page: Page;
let api: APIRequestContext;
let adminSession: string;
let editorSession: string;
let portfolioId: string;
let otherId: string;
const consoleErrors: string[] = [];

const required = (projectTitle: string, projectDetail = DETAIL) => ({
  memberBarcode: BARCODE,
  category: CATEGORY,
  projectTitle,
  projectDetail,
});

async function apiCall(
  method: 'post' | 'put' | 'patch',
  path: string,
  session: string,
  options: { data?: unknown; multipart?: Record<string, unknown> },
) {
  const response = await api[method](path, {
    headers: { Authorization: session },
    ...(options.data !== undefined ? { data: options.data } : {}),
    ...(options.multipart ? { multipart: options.multipart as never } : {}),
  });
  expect(response.status(), await response.text()).toBeLessThan(300);
  return response;
}

async function signIn(username: string, password: string) {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
}

async function signOut() {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
}

/** Toasts of earlier steps would cover what a screenshot is for. */
async function dismissToasts() {
  const dismiss = page.getByRole('button', { name: 'Dismiss notification' });
  // Always the first: the rest move up as each goes. One may time out by itself meanwhile.
  for (let left = 10; left > 0 && (await dismiss.count()) > 0; left--) {
    await dismiss
      .first()
      .click({ timeout: 2000 })
      .catch(() => undefined);
  }
  await expect(dismiss).toHaveCount(0);
}

/** What the window shows, dialog and dimmed page alike (a full-page shot cuts the backdrop). */
async function windowScreenshot(name: string, docsCopy: string) {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const path = `${SCREENSHOT_DIR}/${name}.png`;
  await page.screenshot({ path, animations: 'disabled' });
  await copyFile(path, `docs/${docsCopy}`);
}

const history = () => page.getByRole('region', { name: /^History/ });
const entries = () => history().getByRole('listitem');
const nav = () => page.getByRole('navigation', { name: 'Main' });

test.beforeAll(async ({ browser }) => {
  const baseURL = process.env.E2E_BASE_URL;
  const context = await browser.newContext({
    baseURL,
    viewport: { width: 1280, height: 860 },
    locale: 'en-GB',
  });
  page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(`${message.text()} (at ${page.url()})`);
  });
  api = await playwrightRequest.newContext({ baseURL });
  adminSession = await apiSignIn(api, ADMIN.username, ADMIN.password);
  for (const user of [
    { ...EDITOR, role: 'editor', allowEdit: [CATEGORY] },
    { ...VIEWER, role: 'viewer' },
    { ...OUTSIDER, role: 'editor', allowEdit: ['Lighting'] },
  ]) {
    await apiCall('post', '/api/v1/users', adminSession, { data: user });
  }
  editorSession = await apiSignIn(api, EDITOR.username, EDITOR.password);

  // A colleague's afternoon on the portfolio: nine revisions before the admin looks at it.
  const created = await apiCreatePortfolio(api, editorSession, {
    ...required(TITLE),
    generalTag: ['glass'],
  });
  portfolioId = created.portfolioId;
  const base = `/api/v1/portfolio/${portfolioId}`;
  await apiUploadCover(
    api,
    editorSession,
    portfolioId,
    'blue-cover.png',
    makePng(480, 360, [60, 120, 200], [10, 40, 90]),
  );
  const draft = await apiCall('post', `${base}/draftingProcess`, editorSession, {
    multipart: {
      file: {
        name: 'first-blow.png',
        mimeType: 'image/png',
        buffer: makePng(320, 240, [230, 200, 120], [160, 90, 40]),
      },
    },
  });
  const draftId = ((await draft.json()) as { fileID?: string; fileId?: string }).fileID;
  await apiCall('patch', `${base}/files/${draftId}`, editorSession, {
    data: { description: 'The first gather on the pipe' },
  });
  await apiCall('post', `${base}/additionalDocument`, editorSession, {
    multipart: {
      file: { name: 'price-list.pdf', mimeType: 'application/pdf', buffer: makePdf('Prices') },
    },
  });
  await apiUpdatePortfolio(api, editorSession, portfolioId, {
    ...required(TITLE),
    occasion: ['Wedding'],
  });
  await apiUpdatePortfolio(api, editorSession, portfolioId, {
    ...required(TITLE),
    readyToBuy: 'Yes',
  });
  await apiUpdatePortfolio(api, adminSession, portfolioId, {
    ...required(TITLE),
    command: 'publish',
  });
  // The cover is replaced: restoring an older revision must bring the blue one back.
  await apiUploadCover(
    api,
    editorSession,
    portfolioId,
    'amber-cover.png',
    makePng(480, 360, [250, 190, 80], [170, 70, 20]),
  );

  otherId = (await apiCreatePortfolio(api, adminSession, required(OTHER_TITLE))).portfolioId;
});

test.afterAll(async () => {
  await page.context().close();
  await api.dispose();
  expect(consoleErrors.filter((text) => /Content Security Policy/i.test(text))).toEqual([]);
});

test('the admin edits the portfolio twice', async () => {
  await page.goto(`/portfolios/${portfolioId}`);
  await signIn(ADMIN.username, ADMIN.password);
  await expect(page.getByRole('heading', { name: TITLE, level: 1 })).toBeVisible();

  await page.getByRole('link', { name: 'Edit', exact: true }).click();
  await page.getByLabel('Project title').fill(NEW_TITLE);
  await page.getByRole('button', { name: 'Save changes' }).click();
  await expect(page.getByRole('heading', { name: NEW_TITLE, level: 1 })).toBeVisible();

  await page.getByRole('link', { name: 'Edit', exact: true }).click();
  await page.getByLabel('Project detail').fill('Blown and engraved glass from the lake shore.');
  const tags = page.getByLabel('Tags', { exact: true });
  await tags.fill('engraved');
  await tags.press('Enter');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await expect(page.getByText('Blown and engraved glass from the lake shore.')).toBeVisible();
});

test('History lists who changed which fields, newest first, and pages with Show more', async () => {
  await expect(history()).toBeVisible();
  await expect(history().getByRole('heading')).toContainText('11 revisions');
  await expect(entries()).toHaveCount(10);
  const newest = entries().first();
  await expect(newest).toContainText('Revision 11');
  await expect(newest).toContainText('Current');
  await expect(newest).toContainText(`Edited by ${ADMIN.username}`);
  await expect(newest).toContainText('Changed: Project detail, Tags');
  await expect(entries().nth(1)).toContainText('Changed: Project title');
  await expect(entries().nth(2)).toContainText(`Files changed by ${EDITOR.username}`);
  await expect(entries().nth(2)).toContainText('Cover');
  await expect(entries().nth(3)).toContainText(`Published by ${ADMIN.username}`);

  await history().getByRole('button', { name: 'Show more' }).click();
  await expect(entries()).toHaveCount(11);
  await expect(entries().last()).toContainText(`Created by ${EDITOR.username}`);
  await expect(history().getByRole('button', { name: 'Show more' })).toHaveCount(0);

  await expectAccessible(page, 'detail with history');
  await history().scrollIntoViewIfNeeded();
  await screenshot(page, 'h1-history', 'screenshot-history.png');
});

test('compare shows a past revision beside the current one, differences marked', async () => {
  // Keyboard only: focus the button, open with Enter, leave with Escape.
  const compare8 = history().getByRole('button', {
    name: 'Compare revision 8 with the current version',
  });
  await compare8.focus();
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog', { name: 'Revision 8 and the current version' });
  await expect(dialog).toBeVisible();
  await expect(dialog.getByRole('button', { name: 'Close' })).toBeFocused();
  await expect(dialog.getByText('4 fields differ from the current version.')).toBeVisible();
  const row = (label: string) => dialog.getByRole('row', { name: new RegExp(`^${label}`) });
  await expect(row('Project title')).toContainText('differs');
  await expect(row('Project title').getByRole('cell').first()).toHaveText(TITLE);
  await expect(row('Project title').getByRole('cell').last()).toHaveText(NEW_TITLE);
  await expect(row('Tags')).toContainText('differs');
  await expect(row('Category')).not.toContainText('differs');
  // Files by name and thumbnail: the blue cover then, the amber one now.
  await expect(row('Cover')).toContainText('differs');
  await expect(row('Cover').getByRole('cell').first()).toContainText('blue-cover.png');
  await expect(row('Cover').getByRole('cell').last()).toContainText('amber-cover.png');
  // The server serves thumbnails of the current files; an old one is named until restored.
  await expect(row('Cover').getByRole('cell').first()).toContainText('Not in the current version');
  await expect(row('Cover').getByRole('cell').last().locator('img')).toBeVisible();
  await expect(row('Drafting process')).toContainText('The first gather on the pipe');

  await expectAccessible(page, 'compare dialog');
  await windowScreenshot('h2-compare', 'screenshot-compare.png');
  await dialog.getByLabel('Only fields that differ').check();
  await expect(dialog.getByRole('row')).toHaveCount(5); // the header and four fields

  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expect(compare8).toBeFocused();
});

test('restore asks first, and a conflicting change is reported with a reload', async () => {
  await history()
    .getByRole('button', { name: 'Compare revision 8 with the current version' })
    .click();
  const dialog = page.getByRole('dialog', { name: 'Revision 8 and the current version' });
  await dialog.getByRole('button', { name: 'Restore revision 8' }).click();
  const confirm = page.getByRole('dialog', { name: 'Restore revision 8?' });
  await expect(confirm).toContainText('a new revision, 12');
  await expect(confirm.getByRole('button', { name: 'Cancel' })).toBeFocused();
  // Escape leaves the question, not the comparison under it.
  await page.keyboard.press('Escape');
  await expect(confirm).toBeHidden();
  await expect(dialog).toBeVisible();
  await expect(dialog.getByRole('button', { name: 'Restore revision 8' })).toBeFocused();
  await page.keyboard.press('Enter');

  // Meanwhile the colleague saves: the restore must not overwrite that unseen.
  await apiUpdatePortfolio(api, editorSession, portfolioId, {
    ...required(NEW_TITLE, 'Blown and engraved glass from the lake shore.'),
    projectLanuching: 'Spring 2025',
  });
  await confirm.getByRole('button', { name: 'Restore revision 8' }).click();
  const conflict = page.getByRole('dialog', { name: 'Someone else changed this portfolio' });
  await expect(conflict).toBeVisible();
  await expect(conflict).toContainText('revision 8 was not restored');
  await expectAccessible(page, 'restore conflict');
  await conflict.getByRole('button', { name: 'Reload' }).click();
  await expect(conflict).toBeHidden();
  await expect(dialog.getByRole('columnheader', { name: 'Current (revision 12)' })).toBeVisible();
  await expect(dialog.getByText('5 fields differ from the current version.')).toBeVisible();

  await dialog.getByRole('button', { name: 'Restore revision 8' }).click();
  await expect(confirm).toContainText('a new revision, 13');
  await confirm.getByRole('button', { name: 'Restore revision 8' }).click();
  await expect(page.getByText('Revision 8 was restored as revision 13.')).toBeVisible();
  await expect(dialog).toBeHidden();

  await expect(page.getByRole('heading', { name: TITLE, level: 1 })).toBeVisible();
  await expect(page.getByRole('img', { name: `Cover of ${TITLE}`, exact: true })).toBeVisible();
  const newest = entries().first();
  await expect(newest).toContainText('Revision 13');
  await expect(newest).toContainText('Restored an earlier revision');
  // The restored cover is the blue one again: its bytes are still there.
  await history()
    .getByRole('button', { name: 'Compare revision 11 with the current version' })
    .click();
  const back = page.getByRole('dialog', { name: 'Revision 11 and the current version' });
  const cover = back
    .getByRole('row', { name: /^Cover/ })
    .getByRole('cell')
    .last();
  await expect(cover).toContainText('blue-cover.png');
  // Its bytes were kept for the old revision: the thumbnail loads again.
  await expect(cover.locator('img')).toBeVisible();
  await back.getByRole('button', { name: 'Close' }).click();
});

test('delete asks first, and Undo brings the portfolio back', async () => {
  await page.getByRole('button', { name: 'Delete', exact: true }).click();
  const confirm = page.getByRole('dialog', { name: `Delete “${TITLE}”?` });
  await expect(confirm).toBeVisible();
  await expect(confirm.getByRole('button', { name: 'Cancel' })).toBeFocused();
  await expectAccessible(page, 'delete confirmation');
  await confirm.getByRole('button', { name: 'Move to Trash' }).click();

  await expect(page.getByRole('heading', { name: 'Gallery' })).toBeVisible();
  await expect(page.getByText(`“${TITLE}” was moved to the Trash.`)).toBeVisible();
  await expect(page.getByRole('link', { name: TITLE })).toHaveCount(0);
  const gone = await api.get(`/api/v1/portfolio/${portfolioId}`, {
    headers: { Authorization: adminSession },
  });
  expect(gone.status()).toBe(404);

  await page.getByRole('button', { name: 'Undo' }).click();
  await expect(page.getByText(`“${TITLE}” is back.`)).toBeVisible();
  await expect(page.getByRole('heading', { name: TITLE, level: 1 })).toBeVisible();
  await expect(entries().first()).toContainText('Restored from the Trash');
});

test('deleted again, it waits on the Trash page and comes back from there', async () => {
  await page.getByRole('button', { name: 'Delete', exact: true }).click();
  await page.getByRole('button', { name: 'Move to Trash' }).click();
  await expect(page.getByText(`“${TITLE}” was moved to the Trash.`)).toBeVisible();
  // A second deleted portfolio, so the page shows a list.
  const other = await api.delete(`/api/v1/portfolio/${otherId}`, {
    headers: { Authorization: adminSession },
  });
  expect(other.status()).toBe(204);

  await nav().getByRole('link', { name: 'Trash' }).click();
  await expect(page.getByRole('heading', { name: 'Trash', level: 1 })).toBeVisible();
  const rows = page.getByRole('list', { name: 'Deleted portfolios' }).getByRole('listitem');
  await expect(rows).toHaveCount(2);
  // Newest first: the other one was deleted last.
  await expect(rows.first()).toContainText(OTHER_TITLE);
  await expect(rows.last()).toContainText(TITLE);
  await expect(rows.last()).toContainText(`${CATEGORY} · deleted`);
  await expect(rows.last()).toContainText(`by ${ADMIN.username}`);
  // When each leaves the trash for good, as a date.
  await expect(rows.last()).toContainText(/Deleted for good on .+ unless restored/);
  await expectAccessible(page, 'trash');
  await dismissToasts();
  await screenshot(page, 'h3-trash', 'screenshot-trash.png');

  await page.getByRole('button', { name: `Restore ${TITLE}` }).click();
  await expect(page.getByText(`“${TITLE}” was restored.`)).toBeVisible();
  await expect(rows).toHaveCount(1);
  await expect(page.getByRole('heading', { name: 'Trash', level: 1 })).toBeFocused();
  await page.getByRole('button', { name: 'Open' }).click();
  await expect(page.getByRole('heading', { name: TITLE, level: 1 })).toBeVisible();
  await expect(page.getByRole('img', { name: `Cover of ${TITLE}`, exact: true })).toBeVisible();
});

test('an admin purges from the Trash, which then says it is empty', async () => {
  await nav().getByRole('link', { name: 'Trash' }).click();
  await page.getByRole('button', { name: `Delete for good ${OTHER_TITLE}` }).click();
  const confirm = page.getByRole('dialog', { name: `Delete “${OTHER_TITLE}” for good?` });
  await expect(confirm).toContainText('This cannot be undone.');
  await confirm.getByRole('button', { name: 'Delete for good' }).click();
  await expect(page.getByText(`“${OTHER_TITLE}” was deleted for good.`)).toBeVisible();
  await expect(page.getByRole('heading', { name: 'The Trash is empty' })).toBeVisible();
  await expectAccessible(page, 'empty trash');
  await dismissToasts();
  await screenshot(page, 'h4-trash-empty');
  const purged = await api.post(`/api/v1/trash/${otherId}/restore`, {
    headers: { Authorization: adminSession },
  });
  expect(purged.status()).toBe(404);
});

test('an editor of another category reads the history but may not restore or delete', async () => {
  await signOut();
  await page.goto(`/portfolios/${portfolioId}`);
  await signIn(OUTSIDER.username, OUTSIDER.password);
  await expect(page.getByRole('heading', { name: TITLE, level: 1 })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Delete', exact: true })).toHaveCount(0);
  await history()
    .getByRole('button', { name: 'Compare revision 11 with the current version' })
    .click();
  const dialog = page.getByRole('dialog', { name: 'Revision 11 and the current version' });
  await expect(dialog.getByRole('row', { name: /^Project title/ })).toContainText('differs');
  await expect(dialog.getByRole('button', { name: /^Restore/ })).toHaveCount(0);
  await dialog.getByRole('button', { name: 'Close' }).click();
  await expect(nav().getByRole('link', { name: 'Trash' })).toBeVisible();
});

test('a viewer sees neither History, Delete nor the Trash', async () => {
  await signOut();
  await page.goto(`/portfolios/${portfolioId}`);
  await signIn(VIEWER.username, VIEWER.password);
  await expect(page.getByRole('heading', { name: TITLE, level: 1 })).toBeVisible();
  await expect(history()).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Delete', exact: true })).toHaveCount(0);
  await expect(nav().getByRole('link', { name: 'Trash' })).toHaveCount(0);
  await page.goto('/trash');
  await expect(page.getByText('Only editors and admins can see the Trash.')).toBeVisible();
  await signOut();
});
