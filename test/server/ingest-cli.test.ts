import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningClis, spawnCli } from '../helpers/cli-process';
import { fixtures } from '../helpers/file-fixtures';
import { ADMIN, makeTempDir, startTestServer, type TestServer } from '../helpers/test-server';

/** Writes `files` (relative path → bytes) under `root`. */
async function layout(root: string, files: Record<string, Buffer | string>) {
  for (const [path, bytes] of Object.entries(files)) {
    await mkdir(join(root, path, '..'), { recursive: true });
    await writeFile(join(root, path), bytes);
  }
}

/** Every blob file under the server's blob store (`<dataDir>/blobs/ab/cdef…`). */
async function blobCount(dataDir: string): Promise<number> {
  const root = join(dataDir, 'blobs');
  let count = 0;
  for (const shard of await readdir(root)) {
    if (/^[0-9a-f]{2}$/.test(shard)) count += (await readdir(join(root, shard))).length;
  }
  return count;
}

// Each run starts a CLI process (a few seconds on a loaded machine).
describe('portfolio ingest DIR (DESIGN §16)', { timeout: 120_000 }, () => {
  let server: TestServer;
  let work: string;
  const base = ['--member-barcode', 'M0001', '--category', 'Interior'];

  /** Runs the CLI to its end. */
  async function ingest(dir: string, state: string, extra: string[] = [], env = {}) {
    const run = spawnCli(
      [
        'ingest',
        dir,
        '--server',
        server.url,
        '--state',
        state,
        '--username',
        'admin',
        ...base,
        ...extra,
      ],
      { PORTFOLIO_PASSWORD: ADMIN.password, ...env },
    );
    const { code } = await run.exited;
    return { code, out: run.stdout(), err: run.stderr() };
  }

  async function portfolios() {
    const list = await server.request('GET', '/api/v1/portfolio?pageSize=1000');
    return list.body.lists as Array<{ portfolioId: string; projectTitle: string }>;
  }

  beforeAll(async () => {
    server = await startTestServer();
    work = await makeTempDir();
  }, 120_000);
  afterAll(async () => {
    await killRunningClis();
    await server.close();
    await rm(work, { recursive: true, force: true });
  });

  it('makes one portfolio per sub-folder from its files; a run again sends and adds nothing', async () => {
    const dir = join(work, 'photos');
    const state = join(work, 'photos-state.json');
    await layout(dir, {
      'Lake house/01.jpg': await fixtures.jpeg(64, 48),
      'Lake house/02.png': await fixtures.png(),
      'Lake house/10.jpg': await fixtures.jpeg(80, 40),
      'Lake house/drafts/03.webp': await fixtures.webp(),
      'Lake house/plan.pdf': fixtures.pdf(),
      'Lake house/notes.txt': fixtures.text(),
      'Lake house/blank.jpg': '',
      'Lake house/blob.bin': fixtures.binary(),
      'Lake house/.DS_Store': 'x',
      'Garden/portfolio.json': JSON.stringify({
        memberBarcode: 'M0002',
        category: 'Garden',
        projectDetail: 'A walled garden.',
        cover: 'b.png',
      }),
      'Garden/a.jpg': await fixtures.jpeg(),
      'Garden/b.png': await fixtures.png(),
      'loose.txt': 'not in a project',
    });

    const first = await ingest(dir, state);
    expect(first.code, first.out + first.err).toBe(0);
    expect(first.out).toContain('Made "Lake house" with 6 file(s).');
    expect(first.out).toContain('Made "Garden" with 2 file(s).');
    expect(first.out).toMatch(/Skipped 1 file\(s\), empty file: "Lake house\/blank\.jpg"/);
    expect(first.out).toMatch(/Skipped 1 file\(s\), .*not a kind of file a portfolio takes/);
    expect(first.out).toMatch(/Skipped 1 file\(s\), not inside a project folder.*"loose\.txt"/);
    expect(first.err).toMatch(/Sending: 7\/7 files, .* MB\/s/);

    const made = await portfolios();
    expect(made.map((p) => p.projectTitle).sort()).toEqual(['Garden', 'Lake house']);
    const lake = await server.request(
      'GET',
      `/api/v1/portfolio/${made.find((p) => p.projectTitle === 'Lake house')!.portfolioId}`,
    );
    const names = (files: Array<{ originalFilename: string }>) =>
      files.map((file) => file.originalFilename);
    expect(lake.body.memberBarcode).toBe('M0001');
    expect(lake.body.cover).toMatchObject({
      originalFilename: '01.jpg',
      mimeType: 'image/jpeg',
      dimention: { width: 64, height: 48 },
    });
    expect(names(lake.body.draftingProcess)).toEqual(['02.png', '10.jpg', '03.webp']);
    expect(names(lake.body.additionalDocument)).toEqual(['notes.txt', 'plan.pdf']);
    expect(lake.body.revision).toBe(1);
    const garden = await server.request(
      'GET',
      `/api/v1/portfolio/${made.find((p) => p.projectTitle === 'Garden')!.portfolioId}`,
    );
    expect(garden.body).toMatchObject({ memberBarcode: 'M0002', category: 'Garden' });
    expect(garden.body.cover.originalFilename).toBe('b.png');
    const blobs = await blobCount(server.dataDir);
    expect(blobs).toBe(7); // Garden's b.png has the bytes of Lake house's 02.png: one blob

    const again = await ingest(dir, state);
    expect(again.code, again.out + again.err).toBe(0);
    expect(again.out).toContain('Unchanged "Lake house": its 6 file(s) are there already.');
    expect(again.out).toContain('0 sent (0 bytes)');
    expect(await portfolios()).toHaveLength(2);
    expect(await blobCount(server.dataDir)).toBe(blobs);

    // Without its state (another machine), with a device token: still nothing twice.
    const device = await server.request('POST', '/api/v1/devices', {
      body: { name: 'Scanner', replicaId: 'ingest-scanner' },
    });
    const run = spawnCli(
      ['ingest', dir, '--server', server.url, '--state', join(work, 'other.json'), ...base],
      { PORTFOLIO_TOKEN: device.body.token },
    );
    expect((await run.exited).code, run.stdout() + run.stderr()).toBe(0);
    expect(run.stdout()).toContain('0 made, 0 added to, 2 unchanged, 0 failed');
    expect(await portfolios()).toHaveLength(2);
  });

  it('skips links out of the folder, links to folders, empty files by the thousand; refuses a cover outside', async () => {
    const dir = join(work, 'odd');
    const outside = join(work, 'secret.jpg');
    await writeFile(outside, await fixtures.jpeg(20, 20));
    await layout(dir, {
      'Loop/a.png': await fixtures.png(),
      'Escape/portfolio.json': JSON.stringify({ cover: '../Loop/a.png' }),
      'Escape/b.jpg': await fixtures.jpeg(30, 30),
    });
    await symlink(join(dir, 'Loop'), join(dir, 'Loop', 'again')); // a loop
    await symlink(dir, join(dir, 'Loop', 'root')); // another
    await symlink(outside, join(dir, 'Loop', 'secret.jpg'));
    await mkdir(join(dir, 'Empty'));
    await Promise.all(
      Array.from({ length: 10_000 }, (_, i) => writeFile(join(dir, 'Empty', `e${i}.jpg`), '')),
    );

    const run = await ingest(dir, join(work, 'odd-state.json'));
    expect(run.code, run.out + run.err).toBe(1); // Escape failed
    expect(run.out).toContain('Made "Loop" with 1 file(s).');
    expect(run.out).toContain(
      'Failed "Escape": its portfolio.json names the cover "../Loop/a.png", which is outside the folder',
    );
    expect(run.out).toContain('Skipped "Empty": it holds no file a portfolio can take.');
    expect(run.out).toMatch(
      /Skipped 10000 file\(s\), empty file: "Empty\/e0\.jpg", .* and 9995 more/,
    );
    expect(run.out).toMatch(
      /Skipped 2 file\(s\), link to a folder \(links to folders are not followed\)/,
    );
    expect(run.out).toContain(
      'Skipped 1 file(s), link pointing outside the folder: "Loop/secret.jpg"',
    );
    expect(run.out.split('\n').length).toBeLessThan(30);
    const loop = (await portfolios()).find((p) => p.projectTitle === 'Loop')!;
    const detail = await server.request('GET', `/api/v1/portfolio/${loop.portfolioId}`);
    expect(detail.body.cover.originalFilename).toBe('a.png');
    expect(detail.body.draftingProcess).toEqual([]);
  });

  it('run again after a kill -9 in the middle: no portfolio or blob twice, sent bytes not sent again', async () => {
    const dir = join(work, 'killed');
    const state = join(work, 'killed-state.json');
    const big = Buffer.concat([fixtures.pdf(), randomBytes(24 * 1024 * 1024)]);
    await layout(dir, {
      'A/a.jpg': await fixtures.jpeg(40, 40),
      'B/b.jpg': await fixtures.jpeg(50, 50),
      'B/big.pdf': big,
      'C/c.gif': await fixtures.gif(),
    });
    const before = (await portfolios()).length;
    const blobsBefore = await blobCount(server.dataDir);

    const run = spawnCli(
      ['ingest', dir, '--server', server.url, '--state', state, '--username', 'admin', ...base],
      { PORTFOLIO_PASSWORD: ADMIN.password },
    );
    await run.waitFor(/Made "A"/);
    run.child.kill('SIGKILL');
    expect((await run.exited).signal).toBe('SIGKILL');
    expect((await portfolios()).length).toBeLessThan(before + 3); // C was not reached

    const again = await ingest(dir, state);
    expect(again.code, again.out + again.err).toBe(0);
    expect(again.out).toContain('Unchanged "A"');
    expect(again.out).toContain('Made "C" with 1 file(s).');
    const titles = (await portfolios()).map((p) => p.projectTitle);
    expect(titles.filter((title) => ['A', 'B', 'C'].includes(title)).sort()).toEqual([
      'A',
      'B',
      'C',
    ]);
    expect(await blobCount(server.dataDir)).toBe(blobsBefore + 4);
    const sent = Number(/sent \((\d+) bytes\)/.exec(again.out)![1]);
    expect(sent).toBeLessThanOrEqual(big.length + 10_000); // A's bytes were not sent again
  });
});
