import { readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect } from 'vitest';
import { killRunningClis, spawnCli } from '../helpers/cli-process';
import { embeddedOnly, makeTempDir, portfolioBody, startTestServer } from '../helpers/test-server';

/** Runs `portfolio …` to its end: exit code and output. */
async function cli(args: string[]) {
  const run = spawnCli(args);
  const { code } = await run.exited;
  return { code, out: run.stdout() + run.stderr() };
}

describe('portfolio export and import (DESIGN §11, §14)', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    await killRunningClis();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  embeddedOnly('the CLI here runs on stopped data directories')(
    'exports a stopped library to a ZIP and a CSV, and imports the ZIP into another',
    async () => {
      const source = await startTestServer();
      const target = await startTestServer();
      const out = await makeTempDir();
      dirs.push(source.dataDir, target.dataDir, out);
      const created = await source.request('POST', '/api/v1/portfolio', {
        body: portfolioBody({ projectTitle: 'By the CLI' }),
      });
      expect(created.status).toBe(201);
      const id = created.body.portfolioId;
      await source.stop();
      await target.stop();

      const zip = join(out, 'all.zip');
      const exported = await cli(['export', '--data-dir', source.dataDir, '--out', zip]);
      expect(exported, exported.out).toMatchObject({ code: 0 });
      const csv = join(out, 'all.csv');
      expect(
        (await cli(['export', '--data-dir', source.dataDir, '--out', csv, '--format', 'csv'])).code,
      ).toBe(0);
      expect(await readFile(csv, 'utf8')).toContain('By the CLI');

      const imported = await cli(['import', zip, '--data-dir', target.dataDir]);
      expect(imported.code, imported.out).toBe(0);
      expect(imported.out).toContain('created 1, unchanged 0');
      const again = await cli(['import', zip, '--data-dir', target.dataDir]);
      expect(again.out).toContain('created 0, unchanged 1');

      const bad = join(out, 'bad.zip');
      await writeFile(bad, 'not a zip');
      const refused = await cli(['import', bad, '--data-dir', target.dataDir]);
      expect(refused.code).toBe(1);
      expect(refused.out).toMatch(/not a complete ZIP/);

      const empty = await makeTempDir();
      dirs.push(empty);
      const none = await cli(['export', '--data-dir', empty, '--out', join(out, 'x.zip')]);
      expect(none.code).toBe(1);
      expect(none.out).toMatch(/holds no Portfolio Manager data/);
      expect(existsSync(join(empty, 'db.json'))).toBe(false);

      const check = await startTestServer({ dataDir: target.dataDir });
      try {
        expect((await check.request('GET', `/api/v1/portfolio/${id}`)).body.projectTitle).toBe(
          'By the CLI',
        );
      } finally {
        await check.close();
      }
    },
    120_000,
  );

  embeddedOnly('the CLI here runs on stopped data directories')(
    'imports a CSV: a dry run changes nothing, the import reports each row, a retry is unchanged',
    async () => {
      const target = await startTestServer();
      dirs.push(target.dataDir);
      await target.stop();
      const csv = join(target.dataDir, '..', `rows-${Date.now()}.csv`);
      dirs.push(csv);
      await writeFile(
        csv,
        'Member barcode;Category;Project title;Project detail;Tags\n' +
          'C1;Interior;Étagère;"Oak; two lines\nhere";"a; b"\n' +
          'C2;Interior;;Detail;\n',
      );
      const args = ['import', csv, '--data-dir', target.dataDir];
      const dry = await cli([...args, '--dry-run']);
      expect(dry.code, dry.out).toBe(0);
      expect(dry.out).toContain('row 1: create');
      expect(dry.out).toMatch(/row 2: refused \(Project title: The project title/);
      expect(dry.out).toContain('would create 1, would update 0, unchanged 0, refused 1');
      const real = await cli(args);
      expect(real.out).toContain('create 1, update 0, unchanged 0, refused 1');
      const again = await cli(args);
      expect(again.out).toContain('create 0, update 0, unchanged 1, refused 1');
      const badKey = await cli([...args, '--key', 'title']);
      expect(badKey.code).toBe(2);
      const unknown = await cli([...args, '--mapping', '{"Title":"nope"}']);
      expect(unknown.code).toBe(1);
      expect(unknown.out).toContain('"nope", which is not a field a CSV can set');
    },
    120_000,
  );
});
