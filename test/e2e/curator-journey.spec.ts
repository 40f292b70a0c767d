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
  screenshot,
} from './support';

/**
 * One curator's day, step by step against a real server: each test builds on the one before,
 * in one browser tab, as a person would work.
 */
test.describe.configure({ mode: 'serial' });

const TITLE = 'Riverside Ceramics Studio';
const VIEWER = { username: 'viewer1', password: 'viewer-password-1' };

let page: Page;
let api: APIRequestContext;
let adminSession: string;
let portfolioId: string;
const consoleErrors: string[] = [];
/**
 * While hostile HTML is being sanitized, Chrome reports the blocked `onerror` of the parsed
 * (inert) copy as a CSP violation: that is the policy working, not the app needing inline code.
 */
let sanitizingHostileHtml = false;

const SAMPLES: {
  title: string;
  category: string;
  colours: [[number, number, number], [number, number, number]];
}[] = [
  {
    title: 'Harbour Lights Lamp Series',
    category: 'Lighting',
    colours: [
      [250, 200, 90],
      [200, 80, 40],
    ],
  },
  {
    title: 'Woven Oak Lounge Chair',
    category: 'Furniture',
    colours: [
      [150, 110, 70],
      [60, 40, 30],
    ],
  },
  {
    title: 'Glasshouse Tea Set',
    category: 'Tableware',
    colours: [
      [170, 220, 210],
      [40, 120, 130],
    ],
  },
  {
    title: 'Monsoon Textile Prints',
    category: 'Textiles',
    colours: [
      [90, 60, 160],
      [230, 120, 170],
    ],
  },
  {
    title: 'Alpine Wool Throws',
    category: 'Textiles',
    colours: [
      [220, 225, 235],
      [90, 110, 140],
    ],
  },
  {
    title: 'Copper Kitchen Tools',
    category: 'Kitchen',
    colours: [
      [230, 140, 80],
      [120, 60, 30],
    ],
  },
  {
    title: 'Untitled Sketchbook (no cover yet)',
    category: 'Stationery',
    colours: [
      [0, 0, 0],
      [0, 0, 0],
    ],
  },
];

test.beforeAll(async ({ browser }) => {
  const baseURL = process.env.E2E_BASE_URL;
  // A context of our own (axe needs one), shared by every step of the journey.
  const context = await browser.newContext({
    baseURL,
    viewport: { width: 1280, height: 860 },
    locale: 'en-GB',
  });
  page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error' && !sanitizingHostileHtml)
      consoleErrors.push(`${message.text()} (at ${page.url()})`);
  });
  api = await playwrightRequest.newContext({ baseURL });
  adminSession = await apiSignIn(api, ADMIN.username, ADMIN.password);

  // Other curators' work, so the gallery has something to show besides ours.
  for (const [index, sample] of SAMPLES.entries()) {
    const created = await apiCreatePortfolio(api, adminSession, {
      memberBarcode: `M-${1000 + index}`,
      category: sample.category,
      projectTitle: sample.title,
      projectDetail: `${sample.title}: a sample portfolio made by the end-to-end test.`,
      generalTag: ['sample'],
    });
    if (index < SAMPLES.length - 1) {
      await apiUploadCover(
        api,
        adminSession,
        created.portfolioId,
        `cover-${index}.png`,
        makePng(480, 360, ...sample.colours),
      );
    }
    if (index % 2 === 0) {
      await apiUpdatePortfolio(api, adminSession, created.portfolioId, {
        memberBarcode: `M-${1000 + index}`,
        category: sample.category,
        projectTitle: sample.title,
        projectDetail: `${sample.title}: a sample portfolio made by the end-to-end test.`,
        command: 'publish',
        ...(index === 0 ? { staffPick: true } : {}),
      });
    }
  }
});

test.afterAll(async () => {
  await page.context().close();
  await api.dispose();
  // The app must run under a CSP without inline scripts: a violation shows as a console error.
  expect(consoleErrors.filter((text) => /Content Security Policy/i.test(text))).toEqual([]);
});

async function signIn(username: string, password: string) {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

test('sign-in rejects a wrong password and lets the admin in', async () => {
  await page.goto('/');
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  await expectAccessible(page, 'sign-in');
  await screenshot(page, '01-sign-in');

  await signIn(ADMIN.username, 'not-the-password');
  await expect(page.getByRole('alert')).toContainText('Wrong username or password');

  await signIn(ADMIN.username, ADMIN.password);
  await expect(page.getByRole('heading', { name: 'Gallery' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
  // The session is an HttpOnly cookie: no script can read it, and no web storage holds it.
  expect(await page.evaluate(() => Object.keys(localStorage).length)).toBe(0);
  expect(await page.evaluate(() => Object.keys(sessionStorage).length)).toBe(0);
  expect(await page.evaluate(() => document.cookie)).toBe('');
  const cookie = (await page.context().cookies()).find((c) =>
    c.name.startsWith('portfolio_session'),
  );
  expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/api' });
});

test('the create form validates inline, then creates a portfolio', async () => {
  await page
    .getByRole('navigation', { name: 'Main' })
    .getByRole('link', { name: 'New portfolio' })
    .click();
  await expect(page.getByRole('heading', { name: 'New portfolio' })).toBeVisible();

  await page.getByRole('button', { name: 'Create portfolio' }).click();
  await expect(page.getByText('4 fields need attention.')).toBeVisible();
  await expect(page.getByText('Project title is required.')).toBeVisible();
  await expect(page.getByLabel('Project title')).toBeFocused();
  await expectAccessible(page, 'create form with errors');
  await screenshot(page, '03-create-validation');

  await page.getByLabel('Project title').fill(TITLE);
  await page.getByLabel('Member barcode').fill('bad barcode!');
  await expect(page.getByText('Use letters, digits')).toBeVisible();
  await page.getByLabel('Member barcode').fill('M-2024-001');
  await page
    .getByRole('textbox', { name: 'Category', exact: true })
    .or(page.getByRole('combobox', { name: 'Category', exact: true }))
    .fill('Ceramics');
  await page
    .getByLabel('Project detail')
    .fill('Hand-thrown stoneware fired in a wood kiln by the river.');
  await page.getByLabel('About the project').fill('A two-person studio making everyday pottery.');
  await page.getByLabel('Ready to buy').fill('Yes');
  const tags = page.getByLabel('Tags', { exact: true });
  await tags.fill('stoneware');
  await tags.press('Enter');
  await tags.fill('handmade, kiln');
  await tags.press('Enter');
  await expect(page.getByRole('button', { name: 'Remove kiln from Tags' })).toBeVisible();
  await page.getByLabel('Occasion').fill('Wedding');
  await page.getByLabel('Occasion').press('Enter');

  await page.getByRole('button', { name: 'Create portfolio' }).click();
  await expect(page.getByRole('heading', { name: `Edit “${TITLE}”` })).toBeVisible();
  await expect(page.getByText(`“${TITLE}” was created.`)).toBeVisible();
  portfolioId = decodeURIComponent(new URL(page.url()).pathname.split('/')[2] ?? '');
  expect(portfolioId).not.toBe('');
});

test('uploads a cover and documents with progress, and explains a refused file', async () => {
  // Slow the upload link so the progress bar is there to see.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: 0,
    downloadThroughput: -1,
    uploadThroughput: 256 * 1024,
  });
  const bigCover = makePng(500, 400, [40, 90, 160], [240, 170, 90], 60);
  await page
    .getByLabel('Choose a cover image')
    .setInputFiles({ name: 'studio-cover.png', mimeType: 'image/png', buffer: bigCover });
  await expect(page.getByRole('progressbar', { name: 'Uploading studio-cover.png' })).toBeVisible();
  await screenshot(page, '04-upload-progress');
  await expect(page.getByText('Uploaded studio-cover.png.')).toBeVisible({ timeout: 30_000 });
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: 0,
    downloadThroughput: -1,
    uploadThroughput: -1,
  });
  await cdp.detach();
  await expect(page.getByRole('list', { name: 'Cover files' })).toContainText('studio-cover.png');

  // A PDF is not an image: the cover refuses it with a clear message.
  await page.getByLabel('Choose a cover image').setInputFiles({
    name: 'not-an-image.pdf',
    mimeType: 'application/pdf',
    buffer: makePdf('Nope'),
  });
  await expect(
    page.getByRole('list', { name: 'Uploads to Cover' }).getByRole('alert'),
  ).toContainText('A PDF document cannot be used as the cover; choose an image');
  await page.getByRole('button', { name: 'Dismiss not-an-image.pdf' }).click();

  await page.getByLabel('Add drafting images').setInputFiles([
    {
      name: 'draft-1.png',
      mimeType: 'image/png',
      buffer: makePng(320, 240, [200, 200, 200], [90, 90, 90]),
    },
    {
      name: 'draft-2.png',
      mimeType: 'image/png',
      buffer: makePng(320, 240, [240, 220, 180], [160, 110, 60]),
    },
    {
      name: 'draft-3.png',
      mimeType: 'image/png',
      buffer: makePng(320, 240, [180, 210, 240], [60, 90, 150]),
    },
  ]);
  await page.getByLabel('Add documents').setInputFiles({
    name: 'price-list.pdf',
    mimeType: 'application/pdf',
    buffer: makePdf('Price list'),
  });
  const drafting = page.getByRole('list', { name: 'Drafting process files' });
  await expect(drafting.getByRole('listitem')).toHaveCount(3);
  await expect(page.getByRole('list', { name: 'Additional documents files' })).toContainText(
    'price-list.pdf',
  );

  const firstDraft = drafting.getByRole('listitem').filter({ hasText: 'draft-1.png' });
  await firstDraft.getByLabel('Description of draft-1.png').fill('First sketches at the wheel');
  await firstDraft.getByRole('button', { name: 'Save description' }).click();
  await expect(page.getByText('Description of draft-1.png saved.')).toBeVisible();

  await page.getByRole('button', { name: 'Delete draft-3.png' }).click();
  const confirm = page.getByRole('dialog', { name: 'Delete draft-3.png?' });
  await expect(confirm).toBeVisible();
  await confirm.getByRole('button', { name: 'Delete file' }).click();
  await expect(drafting.getByRole('listitem')).toHaveCount(2);

  await expectAccessible(page, 'edit form with files');
  await screenshot(page, '05-edit-with-files');
});

test('the gallery finds the portfolio by search, filter and sort, and the URL keeps the view', async () => {
  await page
    .getByRole('navigation', { name: 'Main' })
    .getByRole('link', { name: 'Gallery' })
    .click();
  await expect(page.getByRole('status').filter({ hasText: /\d+ portfolios/ })).toHaveText(
    `${SAMPLES.length + 1} portfolios`,
  );
  await expect(page.getByRole('link', { name: TITLE })).toBeVisible();
  // Real thumbnails, not placeholders, on every card that has a cover.
  await expect(page.getByRole('img', { name: `Cover of ${TITLE}`, exact: true })).toBeVisible();
  await expect(page.locator('.portfolio-card img')).toHaveCount(SAMPLES.length);
  await expect(
    page.getByRole('img', { name: 'Cover of Untitled Sketchbook (no cover yet): no image' }),
  ).toBeVisible();
  await expectAccessible(page, 'gallery');
  await screenshot(page, '02-gallery', 'screenshot-gallery.png');

  await page.getByLabel('Search titles').fill('riverside');
  await expect(page).toHaveURL(/q=riverside/);
  await expect(page.getByRole('link', { name: TITLE })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Glasshouse Tea Set' })).toHaveCount(0);
  await expect(page.getByText('1 portfolio match')).toBeVisible();

  await page.getByLabel('Search titles').fill('');
  await page
    .getByRole('textbox', { name: 'Category' })
    .or(page.getByRole('combobox', { name: 'Category' }))
    .fill('Textiles');
  await expect(page).toHaveURL(/category=Textiles/);
  await expect(page.getByText('2 portfolios match')).toBeVisible();
  await page.getByRole('combobox', { name: 'Sort by' }).selectOption({ label: 'Title A–Z' });
  await expect(page).toHaveURL(/sort=projectTitle(&|$)/);
  const titles = page.locator('.card-title');
  await expect(titles).toHaveText(['Alpine Wool Throws', 'Monsoon Textile Prints']);

  // The view is in the URL: a reload (or a bookmark) shows the same thing.
  await page.reload();
  await expect(
    page
      .getByRole('textbox', { name: 'Category' })
      .or(page.getByRole('combobox', { name: 'Category' })),
  ).toHaveValue('Textiles');
  await expect(titles).toHaveText(['Alpine Wool Throws', 'Monsoon Textile Prints']);

  await page.getByRole('combobox', { name: 'Published' }).selectOption({ label: 'Unpublished' });
  await expect(titles).toHaveText(['Monsoon Textile Prints']);
  await page.getByRole('button', { name: 'Clear filters' }).click();
  await expect(page.getByText(`${SAMPLES.length + 1} portfolios`)).toBeVisible();
  await page.getByLabel('Search titles').fill('no such portfolio');
  await expect(page.getByText('No portfolios match this search.')).toBeVisible();
  await page.getByLabel('Search titles').fill('');
});

test('the detail page shows every field, images in a lightbox, and documents to download', async () => {
  await page.getByLabel('Search titles').fill('riverside');
  await page.getByRole('link', { name: TITLE }).click();
  await expect(page.getByRole('heading', { name: TITLE, level: 1 })).toBeVisible();
  await expect(
    page.getByText('Hand-thrown stoneware fired in a wood kiln by the river.'),
  ).toBeVisible();
  await expect(page.getByText('A two-person studio making everyday pottery.')).toBeVisible();
  const details = page.getByRole('complementary', { name: 'Details' });
  await expect(details).toContainText('M-2024-001');
  await expect(details).toContainText('Wedding');
  await expect(details).toContainText('stoneware');
  await expect(page.getByRole('img', { name: `Cover of ${TITLE}`, exact: true })).toBeVisible();

  await page.getByRole('button', { name: 'Open First sketches at the wheel' }).click();
  const lightbox = page.getByRole('dialog', { name: 'Drafting process image' });
  await expect(lightbox.getByRole('img', { name: 'First sketches at the wheel' })).toBeVisible();
  await expect(lightbox).toContainText('1 of 2');
  await page.keyboard.press('ArrowRight');
  await expect(lightbox).toContainText('draft-2.png (2 of 2)');
  await page.keyboard.press('Escape');
  await expect(lightbox).toBeHidden();

  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Download price-list.pdf' }).click();
  expect((await download).suggestedFilename()).toBe('price-list.pdf');

  await page.getByText('File details').first().click();
  await expect(page.getByText('500 × 400 px')).toBeVisible();
  await expectAccessible(page, 'detail');
});

test('admin publishes, marks a staff pick and writes a sanitized certificate description', async () => {
  const admin = page.getByRole('region', { name: 'Admin' });
  await admin.getByRole('button', { name: 'Publish' }).click();
  await expect(page.getByText('Published.', { exact: true })).toBeVisible();
  await expect(admin.getByRole('button', { name: 'Unpublish' })).toBeVisible();
  await admin.getByLabel('Staff pick').check();
  await expect(page.getByText('Marked as a staff pick.')).toBeVisible();
  await expect(page.getByRole('list', { name: 'Status' }).first()).toContainText('Staff pick');

  await page.getByRole('link', { name: 'Edit', exact: true }).click();
  await page.getByLabel('Certificates').fill('Fair Craft 2024');
  await page.getByLabel('Certificates').press('Enter');
  sanitizingHostileHtml = true;
  await page
    .getByLabel('Certificate description', { exact: true })
    .fill(
      '<p>Certified <strong>fair craft</strong> studio.</p><script>alert(1)</script><img src="x" onerror="alert(2)">',
    );
  const preview = page.getByLabel('Certificate description preview');
  await expect(preview.locator('strong')).toHaveText('fair craft');
  await expect(preview.locator('script')).toHaveCount(0);
  await expect(preview.locator('[onerror]')).toHaveCount(0);
  await screenshot(page, '06-certificate-editor');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await expect(page.getByText('Changes saved.')).toBeVisible();
  // The detail page replaces the form; until it has, the form's field holds the same label.
  await expect(page.getByRole('button', { name: 'Save changes' })).toHaveCount(0);
  await expect(page.getByRole('heading', { name: TITLE, level: 1 })).toBeVisible();
  await expect(page.getByLabel('Certificate description')).toContainText(
    'Certified fair craft studio.',
  );
  await expect(page.getByRole('complementary', { name: 'Details' })).toContainText(
    'Fair Craft 2024',
  );
  sanitizingHostileHtml = false;
  await expect(page.getByRole('img', { name: `Cover of ${TITLE}`, exact: true })).toBeVisible();
  await expect(page.locator('.thumb-grid img')).toHaveCount(2);
  await screenshot(page, '07-detail', 'screenshot-detail.png');
});

test('a stale edit shows what changed and can overwrite; leaving unsaved asks first', async () => {
  await page.getByRole('link', { name: 'Edit', exact: true }).click();
  await expect(page.getByLabel('Project title')).toHaveValue(TITLE);

  // Someone else saves while this form is open.
  await apiUpdatePortfolio(api, adminSession, portfolioId, {
    memberBarcode: 'M-2024-001',
    category: 'Ceramics',
    projectTitle: TITLE,
    projectDetail: 'Changed by a colleague in the meantime.',
  });

  await page.getByLabel('Project title').fill(`${TITLE} & Shop`);
  await page
    .getByRole('navigation', { name: 'Main' })
    .getByRole('link', { name: 'Gallery' })
    .click();
  const leave = page.getByRole('dialog', { name: 'Leave without saving?' });
  await expect(leave).toBeVisible();
  await leave.getByRole('button', { name: 'Cancel' }).click();
  await expect(page.getByLabel('Project title')).toHaveValue(`${TITLE} & Shop`);

  await page.getByRole('button', { name: 'Save changes' }).click();
  const conflict = page.getByRole('dialog', { name: 'Someone else changed this portfolio' });
  await expect(conflict).toBeVisible();
  await expect(conflict.getByRole('row', { name: /Project detail/ })).toContainText(
    'Changed by a colleague in the meantime.',
  );
  await expectAccessible(page, 'conflict dialog');
  await screenshot(page, '08-conflict');
  await conflict.getByRole('button', { name: 'Overwrite with mine' }).click();
  await expect(page.getByText('Changes saved.').last()).toBeVisible();
  await expect(page.getByRole('heading', { name: `${TITLE} & Shop`, level: 1 })).toBeVisible();
});

test('the admin creates a viewer account on the Users screen', async () => {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users' }).click();
  await expect(page.getByRole('heading', { name: 'Users', level: 1 })).toBeVisible();
  await page.getByLabel('Username').fill(VIEWER.username);
  await page.getByLabel('Password').fill('short');
  await page.getByLabel('Role', { exact: true }).selectOption('viewer');
  await page.getByRole('button', { name: 'Create user' }).click();
  await expect(page.getByRole('alert').first()).toBeVisible();
  await page.getByLabel('Password').fill(VIEWER.password);
  await page.getByRole('button', { name: 'Create user' }).click();
  await expect(page.getByText(`User ${VIEWER.username} was created.`)).toBeVisible();
  await expect(page.locator('.user-list')).toContainText(VIEWER.username);
  await expectAccessible(page, 'users');
  await screenshot(page, '09-users');
});

test('sign out, then a viewer sees only published portfolios and no editing controls', async () => {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByText('You have signed out.')).toBeVisible();
  await signIn(VIEWER.username, VIEWER.password);
  await expect(page.getByRole('heading', { name: 'Gallery' })).toBeVisible();

  const published = SAMPLES.filter((_, index) => index % 2 === 0).length + 1;
  await expect(page.getByText(`${published} portfolios`)).toBeVisible();
  await expect(page.getByRole('link', { name: `${TITLE} & Shop` })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Woven Oak Lounge Chair' })).toHaveCount(0);
  await expect(page.getByRole('link', { name: 'New portfolio' })).toHaveCount(0);
  await expect(page.getByRole('combobox', { name: 'Published' })).toHaveCount(0);
  await screenshot(page, '10-viewer-gallery');

  await page.getByRole('link', { name: `${TITLE} & Shop` }).click();
  await expect(page.getByRole('heading', { name: `${TITLE} & Shop`, level: 1 })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Edit', exact: true })).toHaveCount(0);
  await expect(page.getByRole('region', { name: 'Admin' })).toHaveCount(0);
});

test('an ended session asks to sign in again and keeps the page', async () => {
  const detailUrl = page.url();
  const cookies = await page.context().cookies();
  const session = cookies.find((cookie) => cookie.name.startsWith('portfolio_session'))?.value;
  expect(session).toBeTruthy();
  await api.delete('/api/v1/appauth', { headers: { Authorization: session ?? '' } });

  await page.getByText('File details').first().click();
  await page.getByRole('button', { name: 'Download price-list.pdf' }).click();
  const dialog = page.getByRole('dialog', { name: 'Sign in' });
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText('Your session has ended');
  await screenshot(page, '11-session-ended');
  await dialog.getByLabel('Username').fill(VIEWER.username);
  await dialog.getByLabel('Password').fill(VIEWER.password);
  await dialog.getByRole('button', { name: 'Sign in' }).click();
  await expect(dialog).toBeHidden();
  expect(page.url()).toBe(detailUrl);
  await expect(page.getByRole('heading', { name: `${TITLE} & Shop`, level: 1 })).toBeVisible();
});

test('a banner shows while the server cannot be reached and clears on reconnect', async () => {
  await page
    .getByRole('navigation', { name: 'Main' })
    .getByRole('link', { name: 'Gallery' })
    .click();
  await page.context().setOffline(true);
  await page.getByRole('combobox', { name: 'Sort by' }).selectOption({ label: 'Title Z–A' });
  await expect(page.getByText('The server cannot be reached.').first()).toBeVisible();
  await screenshot(page, '12-offline');
  await page.context().setOffline(false);
  await expect(page.getByText('The server cannot be reached.')).toHaveCount(0, { timeout: 15_000 });
});

test('the gallery works on a phone-sized screen', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/');
  await expect(page.getByRole('heading', { name: 'Gallery' })).toBeVisible();
  await expect(page.locator('.card-grid--row').first()).toBeVisible();
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - window.innerWidth,
  );
  expect(overflow).toBeLessThanOrEqual(0);
  // The filters below the title search fold away, so the first portfolio is on the first screen.
  const filters = page.locator('.toolbar-toggle');
  await expect(filters).toHaveAccessibleName('Filters');
  await expect(filters).toHaveAttribute('aria-expanded', 'false');
  await expect(page.getByLabel('Category', { exact: true })).toBeHidden();
  const firstCard = await page.locator('.card-grid--row').first().boundingBox();
  expect(firstCard!.y).toBeLessThan(844);
  await expectAccessible(page, 'gallery on a phone');
  await screenshot(page, '13-phone-gallery');
  await filters.click();
  await expect(filters).toHaveAttribute('aria-expanded', 'true');
  await page.getByLabel('Category', { exact: true }).fill('Ceramics');
  await expect(page.locator('.result-count')).toHaveText('1 portfolio match');
  await expect(filters).toHaveAccessibleName('Filters 1 set');
  await screenshot(page, '14-phone-filters');
  await page.getByRole('button', { name: 'Clear filters' }).click();
  // On a phone, signing out is behind the header's menu button.
  await page.getByRole('button', { name: 'Menu' }).click();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
});
