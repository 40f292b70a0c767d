import { access } from 'node:fs/promises';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig, retentionFromEnv } from '../../server/config';
import type { StoredPortfolio } from '../../server/repositories/portfolio-repository-contract';
import { filesOf } from '../../server/domain/portfolio-files';
import {
  embeddedStore,
  portfolioBody,
  startTestServer,
  type TestServer,
  embeddedOnly,
} from '../helpers/test-server';

const DAY = 86_400_000;

async function png(shade: number): Promise<string> {
  const image = sharp({
    create: { width: 2, height: 2, channels: 3, background: { r: shade, g: shade, b: shade } },
  });
  return (await image.png().toBuffer()).toString('base64');
}

const onDisk = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe('history and trash retention with blob collection', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  /** Creates a portfolio and sets its cover `covers` times; answers each cover's blob path. */
  async function coverHistory(
    s: TestServer,
    id: string,
    covers: number,
    firstShade = 0,
  ): Promise<string[]> {
    const created = await s.request('POST', '/api/v1/portfolio', {
      body: portfolioBody({ portfolioId: id }),
    });
    expect(created.status).toBe(201);
    const paths: string[] = [];
    for (let n = 0; n < covers; n++) {
      const upload = await s.request('PUT', `/api/v1/portfolio/${id}/cover`, {
        body: { originalFilename: `${id}-${n}.png`, data: await png(firstShade + n * 20) },
      });
      expect(upload.status).toBe(200);
      const record = (await s.app.portfolios.get(id))!;
      paths.push(s.app.blobStore.pathOf(record.cover!.sha256));
    }
    return paths;
  }

  it('keeps the blobs of kept revisions, and frees them once retention drops those', async () => {
    server = await startTestServer({ history: { keepNewest: 2, keepDays: 90 } });
    const covers = await coverHistory(server, 'p1', 3); // revisions 1..4
    await server.app.blobStore.idle();
    // Every cover is still referenced by a kept revision: nothing was removed on replace.
    for (const path of covers) expect(await onDisk(path)).toBe(true);
    expect((await server.app.portfolios.revisions('p1', 10, null)).total).toBe(4);

    // Everything is recent: the 90 days keep all revisions.
    expect(await server.app.retention.run()).toMatchObject({ revisions: 0, blobs: 0 });

    // 91 days on, only the newest 2 revisions stay.
    const report = await server.app.retention.run(Date.now() + 91 * DAY);
    expect(report).toMatchObject({ revisions: 2, blobs: 1 });
    const kept = await server.app.portfolios.revisions('p1', 10, null);
    expect(kept.items.map((item) => item.revision)).toEqual([4, 3]);
    expect(await onDisk(covers[0]!)).toBe(false); // only revision 2 had it
    expect(await onDisk(covers[1]!)).toBe(true); // revision 3's cover
    expect(await onDisk(covers[2]!)).toBe(true); // the live cover
  });

  it('purges expired trash with its history and blobs, keeping its tombstone', async () => {
    server = await startTestServer({ trash: { keepDays: 30 } });
    const covers = await coverHistory(server, 'gone', 2);
    await coverHistory(server, 'kept', 1, 200); // a cover of its own
    const deleted = await server.app.portfolios.delete('gone', undefined, {
      by: 'admin',
      time: Date.now(),
      command: 'delete',
      changedFields: [],
    });
    expect(await server.app.retention.run()).toMatchObject({ purged: 0, blobs: 0 });
    for (const path of covers) expect(await onDisk(path)).toBe(true);

    const report = await server.app.retention.run(Date.now() + 31 * DAY);
    expect(report).toMatchObject({ purged: 1, blobs: 2 });
    for (const path of covers) expect(await onDisk(path)).toBe(false);
    expect(await server.app.portfolios.getTrashed('gone')).toBeUndefined();
    expect((await server.app.portfolios.revisions('gone', 10, null)).total).toBe(0);
    expect(await server.app.portfolios.get('kept')).toBeDefined();
    const feed = await server.app.portfolios.changesSince(deleted.seq, 10);
    expect(feed.changes).toEqual([
      { seq: deleted.seq + 1, portfolioId: 'gone', revision: deleted.revision, deleted: true },
    ]);
    // The tombstone stays another trash period after the purge, then goes.
    expect(report.tombstones).toBe(0);
    expect(await server.app.retention.run(Date.now() + 29 * DAY)).toMatchObject({ tombstones: 0 });
    expect(await server.app.retention.run(Date.now() + 31 * DAY)).toMatchObject({ tombstones: 1 });
    await expect(server.app.portfolios.changesSince(deleted.seq, 10)).rejects.toMatchObject({
      name: 'ResyncRequiredError',
    });
  });

  it('shows in the trash when each portfolio is due to go, and purges it then', async () => {
    server = await startTestServer({ trash: { keepDays: 7 } });
    await coverHistory(server, 'soon-gone', 1);
    await server.app.portfolios.delete('soon-gone', undefined, {
      by: 'admin',
      time: Date.now(),
      command: 'delete',
      changedFields: [],
    });
    const trash = await server.request('GET', '/api/v1/trash');
    expect(trash.status).toBe(200);
    const [item] = trash.body.lists;
    expect(item.purgeTime).toBe(item.deletedTime + 7 * DAY);
    expect(await server.app.retention.run(item.purgeTime - 60_000)).toMatchObject({ purged: 0 });
    expect(await server.app.retention.run(item.purgeTime + 60_000)).toMatchObject({ purged: 1 });
  });

  it('keeps only the current revision with history off', async () => {
    server = await startTestServer({ history: { enabled: false } });
    const covers = await coverHistory(server, 'p1', 2);
    await server.app.blobStore.idle();
    const history = await server.app.portfolios.revisions('p1', 10, null);
    expect(history.items.map((item) => item.revision)).toEqual([3]);
    // A replaced cover is referenced by nothing kept, so it goes at once, as before history.
    expect(await onDisk(covers[0]!)).toBe(false);
    expect(await onDisk(covers[1]!)).toBe(true);
  });
});

describe('the newest revision is the live record', () => {
  let server: TestServer | undefined;
  afterEach(() => server?.close());

  embeddedOnly('checks object identity in memory')(
    'shares the object instead of copying it, and history survives a reopen',
    async () => {
      server = await startTestServer();
      const created = await server.request('POST', '/api/v1/portfolio', { body: portfolioBody() });
      const id = created.body.portfolioId as string;
      const saved = await server.request('PUT', `/api/v1/portfolio/${id}`, {
        body: portfolioBody({ projectTitle: 'Renamed', revision: 1 }),
      });
      expect(saved.status).toBe(200);
      const live = (await server.app.portfolios.get(id))!;
      const newest = (await server.app.portfolios.revision(id, 2))!;
      expect(newest.snapshot).toBe(live);
      const first = (await server.app.portfolios.revision(id, 1))!.snapshot;
      expect(first.projectTitle).toBe('Lake house');
      expect(filesOf(first)).toEqual([]);

      await server.stop();
      const reopened = await startTestServer({ dataDir: server.dataDir });
      server = reopened;
      const reloaded: StoredPortfolio = (await reopened.app.portfolios.get(id))!;
      expect((await reopened.app.portfolios.revision(id, 2))!.snapshot).toBe(reloaded);
      expect((await reopened.app.portfolios.revision(id, 1))!.snapshot).toEqual(first);
      expect(reloaded.modifiedBy).toBe('admin');
    },
  );

  embeddedOnly('injects a journal write fault')(
    'leaves no trace of a change whose journal write failed: seq and feed as before',
    async () => {
      server = await startTestServer();
      const created = await server.request('POST', '/api/v1/portfolio', { body: portfolioBody() });
      const id = created.body.portfolioId as string;
      const before = await server.app.portfolios.changesSince(0, 100);
      embeddedStore(server.app).injectWriteFault(new Error('disk full'));
      const failed = await server.request('PUT', `/api/v1/portfolio/${id}`, {
        body: portfolioBody({ projectTitle: 'Lost' }),
      });
      expect(failed.status).toBe(500);
      expect(await server.app.portfolios.changesSince(0, 100)).toEqual(before);
      expect((await server.app.portfolios.revisions(id, 10, null)).total).toBe(1);
      const next = await server.request('PUT', `/api/v1/portfolio/${id}`, {
        body: portfolioBody({ projectTitle: 'Kept' }),
      });
      expect(next.status).toBe(200);
      const after = await server.app.portfolios.changesSince(0, 100);
      expect(after.changes.map((change) => change.seq)).toEqual([before.next + 1]);
    },
  );
});

describe('retention settings', () => {
  it('defaults to history on, 90 days and the newest 50; the trash keeps 30 days', () => {
    const config = resolveConfig({ dataDir: 'x' });
    expect(config.history).toEqual({ enabled: true, keepDays: 90, keepNewest: 50 });
    expect(config.trash).toEqual({ keepDays: 30 });
  });

  it('reads PORTFOLIO_HISTORY, _HISTORY_DAYS, _HISTORY_KEEP and _TRASH_DAYS', () => {
    expect(retentionFromEnv({})).toEqual({ history: {}, trash: {} });
    expect(
      retentionFromEnv({
        PORTFOLIO_HISTORY: 'off',
        PORTFOLIO_HISTORY_DAYS: '7',
        PORTFOLIO_HISTORY_KEEP: '5',
        PORTFOLIO_TRASH_DAYS: '0',
      }),
    ).toEqual({ history: { enabled: false, keepDays: 7, keepNewest: 5 }, trash: { keepDays: 0 } });
  });

  it.each([
    ['PORTFOLIO_HISTORY', 'no', 'PORTFOLIO_HISTORY must be "on" or "off", not "no"'],
    ['PORTFOLIO_HISTORY_DAYS', '1.5', 'PORTFOLIO_HISTORY_DAYS must be a whole number of days'],
    ['PORTFOLIO_HISTORY_KEEP', '0', 'PORTFOLIO_HISTORY_KEEP must be a whole number of revisions'],
    ['PORTFOLIO_TRASH_DAYS', '-1', 'PORTFOLIO_TRASH_DAYS must be a whole number of days, 0 or'],
  ])('refuses %s=%s with a message naming it', (name, value, message) => {
    expect(() => retentionFromEnv({ [name]: value })).toThrow(ConfigError);
    expect(() => retentionFromEnv({ [name]: value })).toThrow(message);
  });
});
