/**
 * `portfolio backup create|list|verify|restore` (DESIGN §11) over real files and real processes:
 * a library made by the real server with real images, backed up by the real command line,
 * checked, damaged, interrupted with kill -9, and restored into data directories and PostgreSQL.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../server/storage/postgres/database';
import {
  blobPath,
  blobsOf,
  exportEmbedded,
  exportPostgres,
  type LibraryDump,
} from '../../server/storage/library-transfer';
import { Store } from '../../server/storage/embedded/store';
import { killRunningClis, spawnCli } from '../helpers/cli-process';
import { download, fixtures, uploadMultipart } from '../helpers/file-fixtures';
import { createTestDatabase, postgresUnavailable } from '../helpers/postgres';
import { makeTempDir, portfolioBody, startTestServer } from '../helpers/test-server';

async function run(args: string[], env: Record<string, string> = {}) {
  const cli = spawnCli(['backup', ...args], env);
  const { code } = await cli.exited;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

async function embeddedDump(dataDir: string): Promise<LibraryDump> {
  const store = await Store.open({ dataDir });
  try {
    return exportEmbedded(store);
  } finally {
    await store.close();
  }
}

async function postgresDump(url: string): Promise<LibraryDump> {
  const database = await openDatabase(url);
  try {
    return await exportPostgres(database.pool);
  } finally {
    await database.close();
  }
}

/** The dump in a fixed order and without the library id (a restore makes a new one). */
function comparable(dump: LibraryDump) {
  const by = <T>(items: T[], key: (item: T) => string) =>
    [...items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  return {
    library: { seq: dump.library.seq, horizon: dump.library.horizon },
    portfolios: by(dump.portfolios, (item) => item.portfolioId),
    revisions: by(dump.revisions, (item) => `${item.portfolioId}\u0000${item.revision}`),
    trash: by(dump.trash, (item) => item.portfolioId),
    tombstones: by(dump.tombstones, (item) => item.portfolioId),
    users: by(dump.users, (item) => item.username),
  };
}

const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');

/** Every file under `dir` with its md5, for "untouched" checks. */
async function tree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out[path.slice(dir.length)] = md5(await readFile(path));
  }
  return out;
}

const backupsIn = async (target: string) =>
  (await readdir(target)).filter((name) => name.startsWith('backup-'));

const pgUnavailable = await postgresUnavailable('portfolio backup on PostgreSQL');

describe('portfolio backup', () => {
  const dirs: string[] = [];
  let sourceDir: string;
  let target: string;
  let source: LibraryDump;
  let coverBytes: Buffer;
  let coverPath: string;
  let backupPath: string;

  const tempDir = async (prefix: string) => {
    const dir = await makeTempDir(prefix);
    dirs.push(dir);
    return dir;
  };

  beforeAll(async () => {
    const server = await startTestServer({ database: null });
    sourceDir = server.dataDir;
    dirs.push(sourceDir);
    await server.userSession('editor1', 'editor', ['Interior']);
    const create = async (portfolioId: string, projectTitle: string) => {
      const response = await server.request('POST', '/api/v1/portfolio', {
        body: portfolioBody({ portfolioId, projectTitle }),
      });
      expect(response.status).toBe(201);
    };
    // p-live: two covers, so a kept revision holds a blob the live record no longer does.
    await create('p-live', 'Café au lait');
    await uploadMultipart(server, '/api/v1/portfolio/p-live/cover', await fixtures.jpeg());
    coverBytes = await fixtures.png();
    const cover = await uploadMultipart(server, '/api/v1/portfolio/p-live/cover', coverBytes, {
      filename: 'cover.png',
    });
    expect(cover.status).toBe(200);
    coverPath = `/api/v1/portfolio/p-live/files/${cover.body.fileId}`;
    await create('p-trash', 'Lake house');
    await uploadMultipart(server, '/api/v1/portfolio/p-trash/cover', await fixtures.webp());
    expect((await server.request('DELETE', '/api/v1/portfolio/p-trash')).status).toBe(204);
    await server.stop();
    source = await embeddedDump(sourceDir);
    target = await tempDir('portfolio-backups-');
  });

  afterAll(async () => {
    await killRunningClis();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('backs up a stopped data directory into one folder with a manifest, then lists and verifies it', async () => {
    const created = await run(['create', '--data-dir', sourceDir, '--to', target]);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const [id] = await backupsIn(target);
    backupPath = join(target, id!);
    expect(created.stdout).toContain(`Backup ${id} is complete`);

    const manifest = JSON.parse(await readFile(join(backupPath, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({
      formatVersion: 1,
      libraryId: source.library.libraryId,
      seq: source.library.seq,
      counts: { portfolios: 1, revisions: source.revisions.length, files: 3, trash: 1, users: 2 },
    });
    for (const blob of blobsOf(source)) {
      expect(manifest.files[`../blobs/${blob}`]).toBe(blob);
      expect(await readFile(join(target, 'blobs', blob))).toEqual(
        await readFile(blobPath(join(sourceDir, 'blobs'), blob)),
      );
    }

    const listed = await run(['list', '--to', target, '--json']);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject([{ backupId: id, seq: source.library.seq }]);

    const verified = await run(['verify', join(backupPath, 'manifest.json')]);
    expect(verified.stderr).toBe('');
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(/is whole/);
  });

  it('shares unchanged files with the earlier backups of the folder (incremental)', async () => {
    const blobsBefore = await readdir(join(target, 'blobs'));
    const created = await run(['create', '--data-dir', sourceDir, '--to', target]);
    expect(created.code).toBe(0);
    expect(await backupsIn(target)).toHaveLength(2);
    expect((await readdir(join(target, 'blobs'))).sort()).toEqual(blobsBefore.sort());
    const newest = (await backupsIn(target)).sort().at(-1)!;
    await rm(join(target, newest), { recursive: true });
  });

  it('restores into a new data directory that a server serves as before, with a new library id', async () => {
    const restoredDir = join(await tempDir('portfolio-restore-'), 'data');
    const restored = await run(['restore', backupPath, '--data-dir', restoredDir]);
    expect(restored.stderr).toBe('');
    expect(restored.code).toBe(0);
    const dump = await embeddedDump(restoredDir);
    expect(comparable(dump)).toEqual(comparable(source));
    expect(dump.library.libraryId).not.toBe(source.library.libraryId);
    expect(restored.stdout).toContain(dump.library.libraryId);
    for (const blob of blobsOf(source))
      expect(md5(await readFile(blobPath(join(restoredDir, 'blobs'), blob)))).toBe(
        md5(await readFile(blobPath(join(sourceDir, 'blobs'), blob))),
      );
    // No staging folder, swap marker or lock stays behind.
    expect((await readdir(join(restoredDir, '..'))).sort()).toEqual(['data']);
    expect(await readdir(restoredDir)).not.toContain('portfolio.lock');

    const server = await startTestServer({ dataDir: restoredDir, database: null });
    try {
      await server.signIn('editor1', 'editor1-password');
      const file = await download(server, coverPath);
      expect(file.status).toBe(200);
      expect(md5(file.bytes)).toBe(md5(coverBytes));
      const history = await server.request('GET', '/api/v1/portfolio/p-live/revisions');
      expect(history.body.total).toBe(
        source.revisions.filter((entry) => entry.portfolioId === 'p-live').length,
      );
      const detail = await server.request('GET', '/api/v1/portfolio/p-live');
      expect(detail.body.projectTitle).toBe('Café au lait');
      const feed = await server.request('GET', '/api/v1/changes?since=0');
      expect(feed.body.libraryId).toBe(dump.library.libraryId);
    } finally {
      await server.stop();
    }
  });

  it('refuses a target holding a library without --force, changing nothing; --force replaces it', async () => {
    const other = await startTestServer({ database: null });
    dirs.push(other.dataDir);
    expect(
      (
        await other.request('POST', '/api/v1/portfolio', {
          body: portfolioBody({ portfolioId: 'p-other' }),
        })
      ).status,
    ).toBe(201);
    await other.stop();
    const before = await tree(other.dataDir);

    const refused = await run(['restore', backupPath, '--data-dir', other.dataDir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/already holds a library; nothing was changed\. Give --force/);
    expect(await tree(other.dataDir)).toEqual(before);

    const forced = await run(['restore', backupPath, '--data-dir', other.dataDir, '--force']);
    expect(forced.stderr).toBe('');
    expect(forced.code).toBe(0);
    expect(comparable(await embeddedDump(other.dataDir))).toEqual(comparable(source));
  });

  it('refuses a backup with one byte of a blob flipped: verify fails, restore leaves the target untouched', async () => {
    const damagedTarget = await tempDir('portfolio-damaged-backups-');
    expect((await run(['create', '--data-dir', sourceDir, '--to', damagedTarget])).code).toBe(0);
    const [id] = await backupsIn(damagedTarget);
    const blob = blobsOf(source)[0]!;
    const blobFile = join(damagedTarget, 'blobs', blob);
    const bytes = await readFile(blobFile);
    bytes[bytes.length >> 1]! ^= 0x01;
    await writeFile(blobFile, bytes);

    const verified = await run(['verify', join(damagedTarget, id!)]);
    expect(verified.code).toBe(1);
    expect(verified.stderr).toContain(`../blobs/${blob} is damaged`);

    const existing = await tempDir('portfolio-existing-');
    const server = await startTestServer({ dataDir: existing, database: null });
    await server.stop();
    const before = await tree(existing);
    const refused = await run([
      'restore',
      join(damagedTarget, id!),
      '--data-dir',
      existing,
      '--force',
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/is damaged and cannot be used/);
    expect(await tree(existing)).toEqual(before);

    const fresh = join(await tempDir('portfolio-fresh-'), 'data');
    expect((await run(['restore', join(damagedTarget, id!), '--data-dir', fresh])).code).toBe(1);
    await expect(stat(fresh)).rejects.toThrow();
  });

  for (const step of ['data', 'manifest']) {
    it(`kill -9 while a backup writes its ${step}: no backup is listed as whole`, async () => {
      const killedTarget = await tempDir('portfolio-killed-backups-');
      const cli = spawnCli(['backup', 'create', '--data-dir', sourceDir, '--to', killedTarget], {
        PORTFOLIO_TEST_STALL_AT: step,
      });
      await cli.waitFor(new RegExp(`stalled at ${step}`));
      cli.child.kill('SIGKILL');
      await cli.exited;
      const listed = await run(['list', '--to', killedTarget, '--json']);
      expect(JSON.parse(listed.stdout)).toEqual([]);
      expect(await backupsIn(killedTarget)).toEqual([]);
      // The data directory's lock died with the process: the next backup runs.
      expect((await run(['create', '--data-dir', sourceDir, '--to', killedTarget])).code).toBe(0);
      expect(JSON.parse((await run(['list', '--to', killedTarget, '--json'])).stdout)).toHaveLength(
        1,
      );
    });
  }

  it('kill -9 during a restore, just before its swap: the target is as it was, and the next restore ends clean', async () => {
    const existing = await tempDir('portfolio-swap-');
    const server = await startTestServer({ dataDir: existing, database: null });
    await server.stop();
    const before = await tree(existing);
    const cli = spawnCli(['backup', 'restore', backupPath, '--data-dir', existing, '--force'], {
      PORTFOLIO_TEST_STALL_AT: 'swap',
    });
    await cli.waitFor(/stalled at swap/);
    cli.child.kill('SIGKILL');
    await cli.exited;
    const { 'portfolio.lock': _lock, ...after } = Object.fromEntries(
      Object.entries(await tree(existing)).map(([path, hash]) => [path.replace(/^\//, ''), hash]),
    );
    expect(
      Object.fromEntries(Object.entries(before).map(([p, h]) => [p.replace(/^\//, ''), h])),
    ).toEqual(after);

    const again = await run(['restore', backupPath, '--data-dir', existing, '--force']);
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    expect(comparable(await embeddedDump(existing))).toEqual(comparable(source));
    const parent = join(existing, '..');
    const name = existing.slice(parent.length + 1);
    expect((await readdir(parent)).filter((entry) => entry.includes(`${name}.`))).toEqual([]);
  });

  it('kill -9 between the two renames of a swap: the next restore finishes it', async () => {
    const existing = await tempDir('portfolio-swapping-');
    const server = await startTestServer({ dataDir: existing, database: null });
    await server.stop();
    const cli = spawnCli(['backup', 'restore', backupPath, '--data-dir', existing, '--force'], {
      PORTFOLIO_TEST_STALL_AT: 'swapping',
    });
    await cli.waitFor(/stalled at swapping/);
    cli.child.kill('SIGKILL');
    await cli.exited;
    await expect(stat(existing)).rejects.toThrow(); // moved aside, the restored one not yet in

    // Any later restore (here of the same backup) first finishes the interrupted swap.
    const again = await run(['restore', backupPath, '--data-dir', existing, '--force']);
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    expect(comparable(await embeddedDump(existing))).toEqual(comparable(source));
    const parent = join(existing, '..');
    const name = existing.slice(parent.length + 1);
    expect((await readdir(parent)).filter((entry) => entry.includes(`${name}.`))).toEqual([]);
  });

  it('tells to back up a running server from Settings or the API, in one line', async () => {
    const server = await startTestServer({ database: null });
    dirs.push(server.dataDir);
    try {
      const refused = await run(['create', '--data-dir', server.dataDir, '--to', target]);
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim()).toMatch(
        /^error: A server is using .*Settings → Backups, or POST \/api\/v1\/backups/,
      );
      expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    } finally {
      await server.stop();
    }
  });

  // Several CLI runs each, against a database: slower than one test's usual budget on a busy machine.
  describe.skipIf(pgUnavailable)('PostgreSQL', { timeout: 90_000 }, () => {
    it("kill -9 inside a restore's transaction: the database keeps its library, and the next restore ends clean", async () => {
      const database = await createTestDatabase();
      try {
        const files = await tempDir('portfolio-pg-killed-');
        const into = ['restore', backupPath, '--database', database.url, '--data-dir', files];
        expect((await run(into)).code).toBe(0);
        const before = await postgresDump(database.url);

        // Every row of the replacement written, its COMMIT not sent: killed there.
        const cli = spawnCli(['backup', ...into, '--force'], {
          PORTFOLIO_TEST_STALL_AT: 'swapping',
        });
        await cli.waitFor(/stalled at swapping/);
        cli.child.kill('SIGKILL');
        await cli.exited;
        // The same library as before, down to its id (a restore that ended would make a new one).
        expect(await postgresDump(database.url)).toEqual(before);

        const again = await run([...into, '--force']);
        expect(again.stderr).toBe('');
        expect(again.code).toBe(0);
        const after = await postgresDump(database.url);
        expect(comparable(after)).toEqual(comparable(source));
        expect(after.library.libraryId).not.toBe(before.library.libraryId);
      } finally {
        await database.drop();
      }
    });

    it('restores a backup into an empty database and backs that database up again, equal', async () => {
      const database = await createTestDatabase();
      try {
        const files = await tempDir('portfolio-pg-files-');
        const restored = await run([
          'restore',
          backupPath,
          '--database',
          database.url,
          '--data-dir',
          files,
        ]);
        expect(restored.stderr).toBe('');
        expect(restored.code).toBe(0);
        const dump = await postgresDump(database.url);
        expect(comparable(dump)).toEqual(comparable(source));
        expect(dump.library.libraryId).not.toBe(source.library.libraryId);

        const again = await run([
          'restore',
          backupPath,
          '--database',
          database.url,
          '--data-dir',
          files,
        ]);
        expect(again.code).toBe(1);
        expect(again.stderr).toMatch(/already holds a library/);

        const pgTarget = await tempDir('portfolio-pg-backups-');
        const created = await run([
          'create',
          '--database',
          database.url,
          '--data-dir',
          files,
          '--to',
          pgTarget,
        ]);
        expect(created.stderr).toBe('');
        expect(created.code).toBe(0);
        const [id] = await backupsIn(pgTarget);
        expect((await run(['verify', join(pgTarget, id!)])).code).toBe(0);
        const back = join(await tempDir('portfolio-pg-back-'), 'data');
        expect((await run(['restore', join(pgTarget, id!), '--data-dir', back])).code).toBe(0);
        expect(comparable(await embeddedDump(back))).toEqual(comparable(source));
      } finally {
        await database.drop();
      }
    });
  });
});
