import {
  type APIRequestContext,
  type Locator,
  type Page,
  expect,
  request as playwrightRequest,
  test,
} from '@playwright/test';
import { ADMIN, type ServerProcess, startServerProcess } from './server-process';
import {
  apiCreatePortfolio,
  apiSignIn,
  apiUpdatePortfolio,
  expectAccessible,
  screenshot,
} from './support';

/**
 * Sync in Chromium against two real servers (DESIGN §10): a hub and a replica, each the built
 * server in its own process. An admin sets up the Team server in the replica's Settings, edits the
 * same field on both sides, and resolves the conflict in the UI; the resolve reaches the hub.
 */

test.describe.configure({ mode: 'serial' });

const CATEGORY = 'Textiles';
const required = (projectTitle: string) => ({
  memberBarcode: 'T-2026-016',
  category: CATEGORY,
  projectTitle,
  projectDetail: 'Hand-woven wall hangings in natural dyes.',
});

let hub: ServerProcess;
let replica: ServerProcess;
let hubApi: APIRequestContext;
let replicaApi: APIRequestContext;
let hubSession: string;
let replicaSession: string;
let page: Page;
let portfolioId: string;

test.beforeAll(async ({ browser }) => {
  // Background rounds stay out of the way: this test runs each round itself.
  const quiet = { PORTFOLIO_SYNC_INTERVAL_S: '3600' };
  [hub, replica] = await Promise.all([startServerProcess(quiet), startServerProcess(quiet)]);
  hubApi = await playwrightRequest.newContext({ baseURL: hub.url });
  replicaApi = await playwrightRequest.newContext({ baseURL: replica.url });
  hubSession = await apiSignIn(hubApi, ADMIN.username, ADMIN.password);
  replicaSession = await apiSignIn(replicaApi, ADMIN.username, ADMIN.password);
  // A context of its own (axe needs one), on the replica's origin.
  page = await (await browser.newContext({ baseURL: replica.url })).newPage();
});

test.afterAll(async () => {
  await page?.context().close();
  await hubApi?.dispose();
  await replicaApi?.dispose();
  await Promise.all([hub?.close(), replica?.close()]);
  if (process.env.E2E_SHOW_SERVER_LOG) console.log(hub?.log(), replica?.log());
});

async function signIn(target: Page, path: string) {
  await target.goto(path);
  await target.getByLabel('Username').fill(ADMIN.username);
  await target.getByLabel('Password').fill(ADMIN.password);
  await target.getByRole('button', { name: 'Sign in' }).click();
  await expect(target.getByRole('button', { name: 'Sign out', exact: true })).toBeVisible();
}

/** Presses Tab until `target` has the focus: it is reachable by keyboard, in page order. */
async function tabTo(target: Locator, presses = 60) {
  for (let press = 0; press < presses; press++) {
    if (await target.evaluate((element) => element === document.activeElement)) return;
    await target.page().keyboard.press('Tab');
  }
  throw new Error(`${String(target)} was not reached with ${presses} presses of Tab`);
}

const teamServer = () => page.getByRole('region', { name: 'Team server' });

test('an admin signs this library in to the hub once, and sees it up to date', async () => {
  await signIn(page, '/');
  const indicator = page.getByRole('link', { name: /^Sync: Not set up/ });
  await expect(indicator).toBeVisible();
  await tabTo(indicator);
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/\/settings#team-server$/);

  // A wrong password is said in words, and the field is emptied.
  await teamServer().getByLabel('Hub address').fill(hub.url);
  await teamServer().getByLabel('Username on the hub').fill(ADMIN.username);
  await teamServer().getByLabel('Password on the hub').fill('not-the-password');
  await teamServer().getByRole('button', { name: 'Sign in and sync' }).click();
  await expect(teamServer().getByRole('alert')).toHaveText(
    'Wrong username or password on the hub.',
  );
  await expect(teamServer().getByLabel('Password on the hub')).toHaveValue('');

  // Keyboard only from here: type the password, Enter submits.
  await teamServer().getByLabel('Password on the hub').fill(ADMIN.password);
  await page.keyboard.press('Enter');
  await expect(teamServer().getByText('Up to date')).toBeVisible({ timeout: 30_000 });
  await expect(teamServer().getByText('just now')).toBeVisible();
  await expect(teamServer().getByText('Nothing waiting to be sent.')).toBeVisible();
  await expect(teamServer().getByLabel('Password on the hub')).toHaveCount(0);
  await expect(page.getByRole('link', { name: /^Sync: Up to date, last synced/ })).toBeVisible();

  // The hub lists this device under its user.
  const devices = await hubApi.get(`/api/v1/devices?username=${ADMIN.username}`, {
    headers: { Authorization: hubSession },
  });
  expect((await devices.json()).devices).toHaveLength(1);

  await expectAccessible(page, 'Settings → Team server');
  await screenshot(page, 'sync-settings', 'screenshot-sync-settings.png');

  // "Sync now" is reachable by keyboard.
  await tabTo(teamServer().getByRole('button', { name: 'Sync now' }));
  await page.keyboard.press('Enter');
  await expect(page.getByText(/^Synced: 0 received, 0 sent/)).toBeVisible({ timeout: 30_000 });
});

test('the same field changed on both sides is shown on the card and the page, and resolved', async () => {
  const created = await apiCreatePortfolio(replicaApi, replicaSession, required('Indigo Weaves'));
  portfolioId = created.portfolioId;
  const run = () =>
    replicaApi.post('/api/v1/sync/run', { headers: { Authorization: replicaSession } });
  expect((await run()).status()).toBe(200);
  const onHub = await hubApi.get(`/api/v1/portfolio/${portfolioId}`, {
    headers: { Authorization: hubSession },
  });
  expect(onHub.status(), await onHub.text()).toBe(200);

  // Offline from each other, both change the title.
  await apiUpdatePortfolio(hubApi, hubSession, portfolioId, required('Indigo Weaves (hub)'));
  await apiUpdatePortfolio(
    replicaApi,
    replicaSession,
    portfolioId,
    required('Indigo Weaves (desk)'),
  );

  await page.goto('/settings');
  await teamServer().getByRole('button', { name: 'Sync now' }).click();
  await expect(page.getByText(/^Synced: .* to resolve\.$/)).toBeVisible({ timeout: 30_000 });

  // The gallery marks the card; the page shows both values side by side.
  await page
    .getByRole('navigation', { name: 'Main' })
    .getByRole('link', { name: 'Gallery' })
    .click();
  const card = page.getByRole('article').filter({ hasText: 'Indigo Weaves' });
  await expect(card.getByText('Conflict', { exact: true })).toBeVisible();
  await card.getByRole('link').click();
  const panel = page.getByRole('region', { name: 'A sync conflict to resolve' });
  await expect(panel).toBeVisible();
  const row = panel.getByRole('row', { name: /Project title/ });
  await expect(row.getByRole('cell')).toHaveText(['Indigo Weaves (hub)', 'Indigo Weaves (desk)']);
  await expect(row.getByRole('rowheader')).toContainText('Before both edits: Indigo Weaves');

  await expectAccessible(page, 'Portfolio with a sync conflict');
  await screenshot(page, 'sync-conflict', 'screenshot-conflict.png');

  // Keep the desk's title, by keyboard.
  await tabTo(panel.getByRole('button', { name: 'Keep theirs' }));
  await page.keyboard.press('Enter');
  await expect(page.getByText(/The conflict is resolved/)).toBeVisible();
  await expect(panel).toHaveCount(0);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Indigo Weaves (desk)');
  await expect(
    page.getByRole('region', { name: /^History/ }).getByText('Resolved a sync conflict'),
  ).toBeVisible();

  // The resolve is an ordinary change: the next round takes it to the hub, conflict and all.
  expect((await run()).status()).toBe(200);
  const hubDetail = await hubApi.get(`/api/v1/portfolio/${portfolioId}`, {
    headers: { Authorization: hubSession },
  });
  expect((await hubDetail.json()).projectTitle).toBe('Indigo Weaves (desk)');
});

test('the resolve reaches the hub: its copy of the conflict is gone too', async () => {
  const hubConflicts = await hubApi.get(`/api/v1/portfolio/${portfolioId}/conflicts`, {
    headers: { Authorization: hubSession },
  });
  expect((await hubConflicts.json()).conflicts).toEqual([]);
  // …and the round after does not bring it back to the replica.
  const replicaConflicts = await replicaApi.get('/api/v1/conflicts', {
    headers: { Authorization: replicaSession },
  });
  expect((await replicaConflicts.json()).total).toBe(0);
});

test('a delete against an edit: keep the portfolio, or let the delete stand (to the trash), by keyboard', async () => {
  const headers = (session: string) => ({ headers: { Authorization: session } });
  const run = async () => {
    const round = await replicaApi.post('/api/v1/sync/run', headers(replicaSession));
    expect(round.status(), await round.text()).toBe(200);
  };
  const kept = (await apiCreatePortfolio(replicaApi, replicaSession, required('Madder Red')))
    .portfolioId;
  const trashed = (await apiCreatePortfolio(replicaApi, replicaSession, required('Weld Yellow')))
    .portfolioId;
  await run();

  // Offline from each other: deleted here while edited on the hub, and the other way round.
  await apiUpdatePortfolio(hubApi, hubSession, kept, required('Madder Red (hub)'));
  expect(
    (await replicaApi.delete(`/api/v1/portfolio/${kept}`, headers(replicaSession))).status(),
  ).toBe(204);
  expect((await hubApi.delete(`/api/v1/portfolio/${trashed}`, headers(hubSession))).status()).toBe(
    204,
  );
  await apiUpdatePortfolio(replicaApi, replicaSession, trashed, required('Weld Yellow (desk)'));
  await run();

  // Deleted here, edited on the hub: the edit kept it; keep it for good.
  await page.goto(`/portfolios/${kept}`);
  const panel = page.getByRole('region', { name: 'A sync conflict to resolve' });
  await expect(panel.getByText(/deleted this portfolio on another device/)).toBeVisible();
  await expect(panel.getByText(/can be restored from the Trash/)).toBeVisible();
  await expectAccessible(page, 'Portfolio with a delete conflict');
  await screenshot(page, 'sync-conflict-delete', 'screenshot-conflict-delete.png');
  await tabTo(panel.getByRole('button', { name: 'Keep this portfolio' }));
  await page.keyboard.press('Enter');
  await expect(
    page.getByText(/The conflict is resolved: “Madder Red \(hub\)” is kept/),
  ).toBeVisible();
  await expect(panel).toHaveCount(0);
  await expect(
    page.getByRole('region', { name: /^History/ }).getByText('Resolved a sync conflict'),
  ).toBeVisible();

  // Deleted on the hub, edited here: let the delete stand; it goes to the trash, restorable.
  await page.goto(`/portfolios/${trashed}`);
  await tabTo(panel.getByRole('button', { name: 'Move it to the trash' }));
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/\/trash$/);
  await expect(
    page.getByText(/The delete stands: “Weld Yellow \(desk\)” is in the trash/),
  ).toBeVisible();
  const row = page
    .getByRole('list', { name: 'Deleted portfolios' })
    .getByRole('listitem')
    .filter({ hasText: 'Weld Yellow (desk)' });
  await expect(row.getByRole('button', { name: /^Restore/ })).toBeVisible();

  // Both resolutions reach the hub with the next round.
  await run();
  const hubKept = await hubApi.get(`/api/v1/portfolio/${kept}`, headers(hubSession));
  expect(hubKept.status()).toBe(200);
  expect((await hubKept.json()).projectTitle).toBe('Madder Red (hub)');
  const hubKeptConflicts = await hubApi.get(
    `/api/v1/portfolio/${kept}/conflicts`,
    headers(hubSession),
  );
  expect((await hubKeptConflicts.json()).conflicts).toEqual([]);
  expect((await hubApi.get(`/api/v1/portfolio/${trashed}`, headers(hubSession))).status()).toBe(
    404,
  );
  const hubTrash = await hubApi.get('/api/v1/trash', headers(hubSession));
  expect(
    (await hubTrash.json()).lists.map((item: { portfolioId: string }) => item.portfolioId),
  ).toContain(trashed);
});

test('a device signed out in the hub’s Users screen is told to sign in again', async ({
  browser,
}) => {
  const hubPage = await (await browser.newContext({ baseURL: hub.url })).newPage();
  try {
    await signIn(hubPage, '/users');
    const devices = hubPage.getByRole('group', { name: 'Synced devices' }).first();
    await devices.getByRole('button', { name: /^Sign out device/ }).click();
    await hubPage.getByRole('dialog').getByRole('button', { name: 'Sign out device' }).click();
    await expect(devices.getByText(`No device syncs as ${ADMIN.username}.`)).toBeVisible();
    await expectAccessible(hubPage, 'Users with devices');
  } finally {
    await hubPage.context().close();
  }

  await page.goto('/settings');
  // A background round may find the revocation first (Sync now is then disabled): either way the
  // words must appear; ask for a round while none has.
  const signedOut = teamServer()
    .getByText(/This device was signed out of the hub/)
    .first();
  await expect(async () => {
    if (await signedOut.isVisible()) return;
    const syncNow = teamServer().getByRole('button', { name: 'Sync now' });
    if (await syncNow.isEnabled()) await syncNow.click({ timeout: 2_000 }).catch(() => {});
    await expect(signedOut).toBeVisible({ timeout: 5_000 });
  }).toPass({ timeout: 30_000 });
  await expect(teamServer().getByLabel('Password on the hub')).toBeVisible();
  await expect(page.getByRole('link', { name: /^Sync: Sync failed/ })).toBeVisible();
});
