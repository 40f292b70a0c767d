import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  SCHEMA_VERSION,
  UnsupportedSchemaVersionError,
} from '../../server/storage/embedded/migrations';
import { readSnapshotDocument } from '../../server/storage/embedded/snapshot-file';
import { Store, type Op } from '../../server/storage/embedded/store';
import { makeTempDir } from '../helpers/test-server';

/*
 * Schema 3's snapshot file (snapshot-file.ts): one line per collection, the revisions kept as a
 * checked section parsed on first use; version 2's one-document file still opens.
 */

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await makeTempDir('portfolio-snapshot-');
  dirs.push(dir);
  return dir;
}
async function openStore(dataDir: string): Promise<Store> {
  const store = await Store.open({ dataDir });
  stores.push(store);
  return store;
}
async function closeStore(store: Store): Promise<void> {
  stores.splice(stores.indexOf(store), 1);
  await store.close();
}
const put = (col: string, key: string, value: unknown): Op => ({ type: 'put', col, key, value });
const del = (col: string, key: string): Op => ({ type: 'del', col, key });
const setAside = async (dir: string) =>
  (await readdir(dir)).filter((name) => name.includes('.corrupt-'));
const lines = async (path: string) => (await readFile(path, 'utf8')).split('\n');
const sectionOf = (all: string[], name: string) =>
  all.find((line) => line.startsWith(`{"collection":"${name}"`))!;

describe('snapshot lines (schema 3)', () => {
  it('writes a header, one line per collection and a trailer, and reads them back', async () => {
    const dir = await tempDir();
    const store = await openStore(dir);
    // Not ASCII, and a string that takes two UTF-16 units per character: lengths stay exact.
    await store.commit([
      put('portfolios', 'p1', { title: 'Café ☕ 𝄞 naïve' }),
      put('revisions', 'p1\u00001', { portfolioId: 'p1', revision: 1, note: 'Ünïcode 𝄞' }),
    ]);
    await store.compactNow();
    await closeStore(store);

    const all = await lines(join(dir, 'db.json'));
    expect(JSON.parse(all[0]!)).toMatchObject({ version: SCHEMA_VERSION, format: 'lines' });
    expect(all.at(-1)).toBe(''); // ends with a newline
    const trailer = JSON.parse(all.at(-2)!);
    expect(trailer.sections.map((s: { collection: string }) => s.collection)).toContain(
      'revisions',
    );
    expect(trailer.sections.find((s: any) => s.collection === 'revisions').sha1).toMatch(
      /^[0-9a-f]{40}$/,
    );

    const again = await openStore(dir);
    expect(again.get('portfolios', 'p1')).toEqual({ title: 'Café ☕ 𝄞 naïve' });
    expect(again.get('revisions', 'p1\u00001')).toMatchObject({ note: 'Ünïcode 𝄞' });
    expect(await setAside(dir)).toEqual([]); // read from this file, not rebuilt from the journal
  });

  it('applies the journal to a deferred collection once it is parsed, in order', async () => {
    const dir = await tempDir();
    let store = await openStore(dir);
    await store.commit([put('revisions', 'a', { n: 1 }), put('revisions', 'b', { n: 1 })]);
    await store.compactNow();
    // Journal only, after the snapshot: a change, a delete, a new key, a key put twice.
    await store.commit([put('revisions', 'a', { n: 2 }), del('revisions', 'b')]);
    await store.commit([put('revisions', 'c', { n: 1 })]);
    await store.commit([put('revisions', 'c', { n: 3 }), put('portfolios', 'p', { n: 1 })]);
    await closeStore(store);

    store = await openStore(dir);
    expect(store.get('portfolios', 'p')).toEqual({ n: 1 });
    expect(Object.fromEntries(store.collection('revisions'))).toEqual({
      a: { n: 2 },
      c: { n: 3 },
    });
  });

  it('writes a deferred section back as it was read when nothing changed it', async () => {
    const dir = await tempDir();
    let store = await openStore(dir);
    await store.commit([put('revisions', 'r', { kept: true })]);
    await store.compactNow();
    const before = sectionOf(await lines(join(dir, 'db.json')), 'revisions');
    await closeStore(store);

    store = await openStore(dir);
    await store.commit([put('portfolios', 'p', { n: 1 })]); // revisions never touched
    await store.compactNow();
    expect(sectionOf(await lines(join(dir, 'db.json')), 'revisions')).toBe(before);
    await closeStore(store);

    store = await openStore(dir);
    expect(store.get('revisions', 'r')).toEqual({ kept: true });
    expect(store.get('portfolios', 'p')).toEqual({ n: 1 });
    expect(await setAside(dir)).toEqual([]);
  });

  it("keeps the journal's changes to a deferred collection in the next snapshot", async () => {
    const dir = await tempDir();
    let store = await openStore(dir);
    await store.commit([put('revisions', 'r', { n: 1 })]);
    await store.compactNow();
    await store.commit([put('revisions', 'r', { n: 2 })]); // journal only
    await closeStore(store);

    store = await openStore(dir); // revisions deferred, with one replayed change
    await store.commit([put('portfolios', 'p', { n: 1 })]);
    await store.compactNow();
    await closeStore(store);

    store = await openStore(dir);
    expect(store.get('revisions', 'r')).toEqual({ n: 2 });
  });

  it('sets aside a generation whose deferred section was damaged, and falls back', async () => {
    const dir = await tempDir();
    let store = await openStore(dir);
    await store.commit([put('revisions', 'r', { word: 'before' })]);
    await store.compactNow();
    await store.commit([put('portfolios', 'p', { n: 1 })]);
    await store.compactNow();
    await closeStore(store);
    // Same length, still valid JSON: only the digest can tell.
    const path = join(dir, 'db.json');
    await writeFile(path, (await readFile(path, 'utf8')).replace('"before"', '"bexore"'));

    store = await openStore(dir);
    expect(store.get('revisions', 'r')).toEqual({ word: 'before' });
    expect(store.get('portfolios', 'p')).toEqual({ n: 1 }); // from the journal
    expect((await readdir(dir)).some((name) => /^db\.json\.corrupt-\d+$/.test(name))).toBe(true);
  });

  it('sets aside a file whose sections do not add up to it', async () => {
    const dir = await tempDir();
    let store = await openStore(dir);
    await store.commit([put('portfolios', 'one', 1)]);
    await store.compactNow();
    await store.commit([put('portfolios', 'two', 2)]);
    await store.compactNow();
    await closeStore(store);
    // A whole line lost from the middle: every remaining line still parses on its own.
    const path = join(dir, 'db.json');
    const all = await lines(path);
    await writeFile(
      path,
      all.filter((line) => !line.startsWith('{"collection":"users"')).join('\n'),
    );

    store = await openStore(dir);
    expect([...store.collection('portfolios').keys()].sort()).toEqual(['one', 'two']);
    expect((await readdir(dir)).some((name) => /^db\.json\.corrupt-\d+$/.test(name))).toBe(true);
  });

  it('refuses a lines snapshot of a newer version and leaves it as it is', async () => {
    const dir = await tempDir();
    const newer =
      `${JSON.stringify({ version: SCHEMA_VERSION + 1, journalSeq: 0, format: 'lines' })}\n` +
      `${JSON.stringify({ sections: [] })}\n`;
    await writeFile(join(dir, 'db.json'), newer);
    await expect(Store.open({ dataDir: dir })).rejects.toBeInstanceOf(
      UnsupportedSchemaVersionError,
    );
    expect(await readFile(join(dir, 'db.json'), 'utf8')).toBe(newer);
  });

  it('opens a version 2 snapshot (one JSON document) and rewrites it as lines', async () => {
    const dir = await tempDir();
    const document = {
      version: 2,
      journalSeq: 0,
      collections: {
        meta: { library: { libraryId: 'lib', seq: 1, horizon: 0 } },
        portfolios: { p1: { portfolioId: 'p1', seq: 1, title: 'Old' } },
        revisions: { 'p1\u00001': { portfolioId: 'p1', revision: 1, seq: 1 } },
      },
    };
    await writeFile(join(dir, 'db.json'), JSON.stringify(document));

    const store = await openStore(dir);
    expect(store.get('portfolios', 'p1')).toMatchObject({ title: 'Old' });
    expect(store.get('revisions', 'p1\u00001')).toMatchObject({ revision: 1 });
    const header = JSON.parse((await lines(join(dir, 'db.json')))[0]!);
    expect(header).toMatchObject({ version: SCHEMA_VERSION, format: 'lines' });
    const rewritten = (await readSnapshotDocument(join(dir, 'db.json')))!;
    expect(rewritten.collections.portfolios).toEqual(document.collections.portfolios);
    expect(rewritten.collections.revisions).toEqual(document.collections.revisions);
    // The version 2 file is kept as the previous generation.
    expect(JSON.parse(await readFile(join(dir, 'db.json.1'), 'utf8'))).toEqual(document);
  });
});
