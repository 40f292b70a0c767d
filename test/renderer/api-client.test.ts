import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

/**
 * The renderer's API modules, typed by the generated client, against the real server over HTTP.
 * They resolve paths against the page's origin, which a test sets before loading them.
 */
let server: TestServer;
let session: string | null = null;
const unauthorized: unknown[] = [];

type Modules = Awaited<ReturnType<typeof load>>;
let modules: Modules;

async function load() {
  const [client, errors, portfolios, sessions, users, history, sync] = await Promise.all([
    import('../../renderer/src/api/api-client'),
    import('../../renderer/src/api/api-error'),
    import('../../renderer/src/api/portfolio-api'),
    import('../../renderer/src/api/session-api'),
    import('../../renderer/src/api/users-api'),
    import('../../renderer/src/api/history-api'),
    import('../../renderer/src/api/sync-api'),
  ]);
  return { client, errors, portfolios, sessions, users, history, sync };
}

beforeAll(async () => {
  server = await startTestServer();
  Object.defineProperty(globalThis, 'location', {
    value: { origin: server.url },
    configurable: true,
  });
  modules = await load();
  modules.client.configureApi({
    getSessionId: () => session,
    onUnauthorized: (error) => unauthorized.push(error),
  });
});

afterAll(async () => {
  Reflect.deleteProperty(globalThis, 'location');
  await server.close();
});

describe('the renderer API client', () => {
  it('signs in, creates, reads, updates and lists portfolios', async () => {
    const { portfolios, sessions } = modules;
    const signedIn = await sessions.signIn(ADMIN);
    session = signedIn.sessionId;
    expect((await sessions.getCurrentSession()).user.role).toBe('admin');

    const created = await portfolios.createPortfolio(portfolioBody({ projectTitle: 'Typed' }));
    expect(created).toMatchObject({ projectTitle: 'Typed', revision: 1 });
    const detail = await portfolios.getPortfolio(created.portfolioId);
    expect(detail).toMatchObject({ oboutProject: '', published: false, cover: null });

    const updated = await portfolios.runCommand(detail, 'publish');
    expect(updated.revision).toBe(2);
    const page = await portfolios.listPortfolios({ pageSize: 10 });
    expect(page.lists).toEqual([
      expect.objectContaining({ portfolioId: created.portfolioId, published: true }),
    ]);
  });

  it('reads history, restores a revision, deletes conditionally and restores from the trash', async () => {
    const { history, portfolios } = modules;
    const { portfolioId } = await portfolios.createPortfolio(
      portfolioBody({ projectTitle: 'One' }),
    );
    await portfolios.updatePortfolio(portfolioId, portfolioBody({ projectTitle: 'Two' }));

    const revisions = await history.listRevisions(portfolioId, { pageSize: 10 });
    expect(revisions.revisions.map((entry) => entry.revision)).toEqual([2, 1]);
    expect((await history.getRevision(portfolioId, 1)).projectTitle).toBe('One');
    const restored = await history.restoreRevision(portfolioId, 1, 2);
    expect(restored).toMatchObject({ projectTitle: 'One', revision: 3 });

    await expect(history.deletePortfolio(portfolioId, 2)).rejects.toMatchObject({
      status: 409,
      code: 'REVISION_CONFLICT',
    });
    await history.deletePortfolio(portfolioId, 3);
    const trash = await history.listTrash({});
    expect(trash.lists.map((entry) => entry.portfolioId)).toContain(portfolioId);
    expect((await history.restoreFromTrash(portfolioId)).revision).toBe(4);
    await history.deletePortfolio(portfolioId, 4);
    await history.purgeFromTrash(portfolioId);
    expect((await history.listTrash({})).lists).toEqual([]);
  });

  it('drives sync: a wrong password on the hub is a 401 that does not end this session', async () => {
    const { sync } = modules;
    // The server is its own hub here: a real hello, a real sign-in refused.
    expect(await sync.getSyncConfig()).toEqual({ configured: false, available: true });
    const wrong = sync.putSyncConfig({ hubUrl: server.url, username: 'admin', password: 'nope' });
    await expect(wrong).rejects.toMatchObject({ status: 401, code: 'HUB_SIGN_IN_FAILED' });
    expect(unauthorized).toEqual([]);
    const status = await sync.getSyncStatus();
    expect(status).toMatchObject({ state: 'error', lastSuccess: null, conflicts: 0 });
    expect(status.lastError?.code).toBe('HUB_SIGN_IN_FAILED');
    expect(await sync.listAllConflicts()).toEqual([]);
    expect((await sync.listDevices('admin')).devices).toEqual([]);
  });

  it('turns error answers into ApiErrors with the code, and reports a dead session', async () => {
    const { errors, portfolios, sessions, users } = modules;
    const stale = portfolios.updatePortfolio('missing', {
      ...portfolioBody(),
      revision: 1,
    });
    await expect(stale).rejects.toMatchObject({ status: 404, code: 'PORTFOLIO_NOT_FOUND' });
    await expect(users.deleteUser('nobody')).rejects.toBeInstanceOf(errors.ApiError);

    const wrong = sessions.signIn({ username: 'admin', password: 'wrong-password' });
    await expect(wrong).rejects.toMatchObject({ status: 401, code: 'INVALID_CREDENTIALS' });
    expect(unauthorized).toEqual([]); // a wrong password is not an ended session

    await sessions.signOut();
    await expect(sessions.getCurrentSession()).rejects.toMatchObject({ status: 401 });
    expect(unauthorized).toHaveLength(1);
  });
});
