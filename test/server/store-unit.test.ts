import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { constants as fsConstants } from 'node:fs';
import {
  appendFile,
  open as openFile,
  readdir,
  readFile,
  readlink,
  rm,
  stat,
  truncate,
  writeFile,
  type FileHandle,
} from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DataDirInUseError, LOCK_FILE_NAME } from '../../server/storage/embedded/data-dir-lock';
import { Journal } from '../../server/storage/embedded/journal';
import {
  UnsupportedSchemaVersionError,
  SCHEMA_VERSION,
} from '../../server/storage/embedded/migrations';
import {
  readSnapshotDocument,
  StorageCorruptError,
} from '../../server/storage/embedded/snapshot-file';
import {
  MAX_WRITES_IN_FLIGHT,
  Store,
  StorageWriteError,
  type StoreOptions,
} from '../../server/storage/embedded/store';
import { makeTempDir } from '../helpers/test-server';

const dirs: string[] = [];
const open: Store[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(open.splice(0).map((store) => store.close()));
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await makeTempDir('portfolio-store-');
  dirs.push(dir);
  return dir;
}
async function openStore(dataDir: string, options: Partial<StoreOptions> = {}): Promise<Store> {
  const store = await Store.open({ dataDir, ...options });
  open.push(store);
  return store;
}
async function reopen(store: Store, dataDir: string, options: Partial<StoreOptions> = {}) {
  await store.close();
  return openStore(dataDir, options);
}
const put = (key: string, value: unknown) =>
  ({ type: 'put', col: 'portfolios', key, value }) as const;
const del = (key: string) => ({ type: 'del', col: 'portfolios', key }) as const;
const keys = (store: Store) => [...store.collection('portfolios').keys()].sort();

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

/** The open flags of this process's descriptor of `path` (Linux: /proc/self/fdinfo). */
async function fdFlagsOf(path: string): Promise<number> {
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
    if (target !== path) continue;
    const info = await readFile(`/proc/self/fdinfo/${fd}`, 'utf8');
    return parseInt(/flags:\s+(\d+)/.exec(info)![1]!, 8);
  }
  throw new Error(`${path} is not open`);
}

describe('Store', () => {
  it('applies a commit at once and keeps it across a reopen (journal only)', async () => {
    const dir = await tempDir();
    let store = await openStore(dir);
    const pending = store.commit([put('a', { n: 1 }), put('b', { n: 2 })]);
    expect(store.get('portfolios', 'a')).toEqual({ n: 1 }); // visible before durable
    await pending;
    await store.commit([del('b'), put('a', { n: 3 })]);
    store = await reopen(store, dir);
    expect(keys(store)).toEqual(['a']);
    expect(store.get('portfolios', 'a')).toEqual({ n: 3 });
    // The only snapshot is the empty one made at creation: the records came from the journal.
    const snapshot = (await readSnapshotDocument(join(dir, 'db.json'))) as any;
    expect(snapshot).toMatchObject({ version: SCHEMA_VERSION, journalSeq: 0 });
    expect(snapshot.collections.portfolios).toEqual({});
  });

  it('shares one journal write among concurrent commits (group commit)', async () => {
    const dir = await tempDir();
    let store = await openStore(dir);
    const write = vi.spyOn(Journal.prototype, 'write');
    await Promise.all(Array.from({ length: 200 }, (_, i) => store.commit([put(`k${i}`, i)])));
    expect(write.mock.calls.length).toBeGreaterThan(0);
    expect(write.mock.calls.length).toBeLessThan(20);
    store = await reopen(store, dir);
    expect(keys(store)).toHaveLength(200);
  });

  it('rolls back a failed write in memory and on disk, then writes again', async () => {
    const dir = await tempDir();
    let store = await openStore(dir);
    await store.commit([put('a', { v: 'old' }), put('gone', 1)]);
    store.injectWriteFault(new Error('disk full'));
    const failed = store.commit([put('a', { v: 'new' }), del('gone'), put('fresh', 1)]);
    // Another commit queued behind the failed one shares its fate.
    const queued = store.commit([put('also', 1)]);
    await expect(failed).rejects.toBeInstanceOf(StorageWriteError);
    await expect(queued).rejects.toBeInstanceOf(StorageWriteError);
    expect(store.get('portfolios', 'a')).toEqual({ v: 'old' });
    expect(store.get('portfolios', 'gone')).toBe(1);
    expect(store.get('portfolios', 'fresh')).toBeUndefined();
    expect(store.get('portfolios', 'also')).toBeUndefined();

    await store.commit([put('after', 1)]);
    store = await reopen(store, dir);
    expect(keys(store)).toEqual(['a', 'after', 'gone']);
    expect(store.get('portfolios', 'a')).toEqual({ v: 'old' });
  });

  it.runIf(process.platform === 'linux')(
    'writes the journal O_DSYNC: a group is durable in one write, without a separate fdatasync',
    async () => {
      const dir = await tempDir();
      const store = await openStore(dir);
      const probe = await openFile(join(dir, 'probe'), 'w');
      const datasync = vi.spyOn(Object.getPrototypeOf(probe) as FileHandle, 'datasync');
      await probe.close();
      await store.commit([put('a', 1)]);
      expect(datasync).not.toHaveBeenCalled();
      const segment = (await readdir(dir)).find((name) => name.startsWith('journal-'))!;
      const flags = await fdFlagsOf(join(dir, segment));
      expect(flags & fsConstants.O_DSYNC).toBe(fsConstants.O_DSYNC);
    },
  );

  it('starts a write while others are in flight, up to a limit, and groups what comes beyond it', async () => {
    const dir = await tempDir();
    let store = await openStore(dir);
    const write = vi.spyOn(Journal.prototype, 'write');
    const started: Promise<void>[] = [];
    for (let i = 1; i <= MAX_WRITES_IN_FLIGHT; i++) {
      // Not kept waiting for the writes before (and for the event loop to see them end).
      started.push(store.commit([put(`k${i}`, i)]));
      expect(write).toHaveBeenCalledTimes(i);
    }
    const grouped = [store.commit([put('x', 1)]), store.commit([put('y', 2)])];
    expect(write).toHaveBeenCalledTimes(MAX_WRITES_IN_FLIGHT);
    await Promise.all([...started, ...grouped]);
    expect(write).toHaveBeenCalledTimes(MAX_WRITES_IN_FLIGHT + 1);
    expect(write.mock.calls.at(-1)![0].split('\n')).toHaveLength(3); // x and y: one group
    store = await reopen(store, dir);
    expect(keys(store)).toHaveLength(MAX_WRITES_IN_FLIGHT + 2);
  });

  it('acknowledges overlapping writes in order: one that ends first waits for those before it', async () => {
    const store = await openStore(await tempDir());
    const writes: ((bytes: number) => void)[] = [];
    vi.spyOn(Journal.prototype, 'write').mockImplementation(
      () => new Promise<number>((resolve) => writes.push(resolve)),
    );
    const acknowledged: string[] = [];
    const first = store.commit([put('a', 1)]).then(() => acknowledged.push('a'));
    const second = store.commit([put('b', 2)]).then(() => acknowledged.push('b'));
    expect(writes).toHaveLength(2);
    writes[1]!(10);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(acknowledged).toEqual([]);
    writes[0]!(10);
    await Promise.all([first, second]);
    expect(acknowledged).toEqual(['a', 'b']);
  });

  it('keeps the writes before a failed one, and rolls back it and those after it', async () => {
    const dir = await tempDir();
    let store = await openStore(dir);
    const first = store.commit([put('a', 1)]);
    store.injectWriteFault(new Error('disk full'));
    const failed = store.commit([put('b', 2)]); // in flight beside the first, and fails
    const after = store.commit([put('c', 3)]); // written once the first ends, then cut off
    await first;
    await expect(failed).rejects.toBeInstanceOf(StorageWriteError);
    await expect(after).rejects.toBeInstanceOf(StorageWriteError);
    expect(keys(store)).toEqual(['a']);
    await store.commit([put('d', 4)]);
    const segment = (await readdir(dir)).find((name) => name.startsWith('journal-'))!;
    const journal = await readFile(join(dir, segment), 'utf8');
    expect(
      journal
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line).s),
    ).toEqual([1, 2]);
    store = await reopen(store, dir);
    expect(keys(store)).toEqual(['a', 'd']);
  });

  it('cuts off a whole journal line left by a crash behind a torn one (writes overlap)', async () => {
    const dir = await tempDir();
    let store = await openStore(dir);
    await store.commit([put('whole', 1)]);
    await store.close();
    open.splice(0);
    const segment = (await readdir(dir)).find((name) => name.startsWith('journal-'))!;
    // The earlier write never reached the disk (a hole reads as zeros); the later one did.
    await appendFile(
      join(dir, segment),
      '\0'.repeat(40) + '{"s":3,"o":[{"type":"put","col":"portfolios","key":"later","value":1}]}\n',
    );
    store = await openStore(dir);
    expect(keys(store)).toEqual(['whole']);
    await store.commit([put('next', 2)]);
    store = await reopen(store, dir);
    expect(keys(store)).toEqual(['next', 'whole']);
  });

  it('writes snapshots with a version, rotating previous generations', async () => {
    const dir = await tempDir();
    const store = await openStore(dir, { generations: 2 });
    const seqs: number[] = [];
    for (let round = 1; round <= 4; round++) {
      await store.commit([put(`r${round}`, round)]);
      await store.compactNow();
      const db = (await readSnapshotDocument(join(dir, 'db.json'))) as any;
      expect(db.version).toBe(SCHEMA_VERSION);
      expect(Object.keys(db.collections.portfolios)).toHaveLength(round);
      seqs.push(db.journalSeq);
    }
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    const names = (await readdir(dir)).filter((name) => name.startsWith('db.json')).sort();
    expect(names).toEqual(['db.json', 'db.json.1', 'db.json.2']);
    const previous = (await readSnapshotDocument(join(dir, 'db.json.1'))) as any;
    expect(Object.keys(previous.collections.portfolios)).toHaveLength(3);
    const oldest = (await readSnapshotDocument(join(dir, 'db.json.2'))) as any;
    expect(Object.keys(oldest.collections.portfolios)).toHaveLength(2);
  });

  it('compacts on its own once the journal passes compactMinBytes, without losing writes', async () => {
    const dir = await tempDir();
    let store = await openStore(dir, { compactMinBytes: 2_000 });
    const writes = Array.from({ length: 300 }, (_, i) =>
      store.commit([put(`p${i}`, { title: `portfolio ${i}`, pad: 'x'.repeat(50) })]),
    );
    await Promise.all(writes);
    await store.idle();
    expect((await stat(join(dir, 'db.json'))).size).toBeGreaterThan(2_000);
    store = await reopen(store, dir, { compactMinBytes: 2_000 });
    expect(keys(store)).toHaveLength(300);
  });

  it('keeps commits made while a snapshot is being written', async () => {
    const dir = await tempDir();
    let store = await openStore(dir);
    await Promise.all(Array.from({ length: 50 }, (_, i) => store.commit([put(`a${i}`, i)])));
    const compacting = store.compactNow();
    const during = Array.from({ length: 50 }, (_, i) => store.commit([put(`b${i}`, i)]));
    await Promise.all([compacting, ...during]);
    store = await reopen(store, dir);
    expect(keys(store)).toHaveLength(100);
  });

  it('recovers from a truncated db.json via the previous generation and the journal', async () => {
    const dir = await tempDir();
    let store = await openStore(dir);
    await store.commit([put('one', 1)]);
    await store.compactNow();
    await store.commit([put('two', 2)]);
    await store.compactNow();
    await store.commit([put('three', 3)]); // journal only
    await store.close();
    const size = (await stat(join(dir, 'db.json'))).size;
    await truncate(join(dir, 'db.json'), Math.floor(size / 2));

    const warnings: string[] = [];
    store = await openStore(dir, { log: { info() {}, warn: (m) => warnings.push(m), error() {} } });
    expect(keys(store)).toEqual(['one', 'three', 'two']);
    expect(warnings.join('\n')).toMatch(/unreadable.*recovered from .*db\.json\.1/);
    const names = await readdir(dir);
    expect(names.some((name) => /^db\.json\.corrupt-\d+$/.test(name))).toBe(true);
    // And writing goes on normally.
    await store.commit([put('four', 4)]);
    await store.compactNow();
    store = await reopen(store, dir);
    expect(keys(store)).toEqual(['four', 'one', 'three', 'two']);
  });

  it('rebuilds from the journal when every generation is unreadable but the journal is whole', async () => {
    const dir = await tempDir();
    let store = await openStore(dir);
    await store.commit([put('one', 1)]);
    await store.compactNow();
    await store.commit([put('two', 2)]);
    await store.close();
    await writeFile(join(dir, 'db.json'), '{"version":1,"journalSeq":');
    store = await openStore(dir);
    expect(keys(store)).toEqual(['one', 'two']);
  });

  it('refuses to open (never an empty database) when no generation is readable and the journal was trimmed', async () => {
    const dir = await tempDir();
    const store = await openStore(dir, { generations: 1 });
    for (let i = 0; i < 3; i++) {
      await store.commit([put(`k${i}`, i)]);
      await store.compactNow();
    }
    await store.close();
    open.splice(0);
    const segments = (await readdir(dir)).filter((name) => name.startsWith('journal-'));
    expect(segments).not.toContain('journal-000000000001.ndjson'); // trimmed
    await writeFile(join(dir, 'db.json'), 'garbage');
    await writeFile(join(dir, 'db.json.1'), '');
    await expect(Store.open({ dataDir: dir, generations: 1 })).rejects.toBeInstanceOf(
      StorageCorruptError,
    );
    // Nothing was written in their place, and the lock was released.
    const names = await readdir(dir);
    expect(names).not.toContain('db.json');
    expect(names).not.toContain(LOCK_FILE_NAME);
    expect(names.filter((name) => name.includes('.corrupt-'))).toHaveLength(2);
  });

  it('opens without reading journal segments the snapshot already holds', async () => {
    const dir = await tempDir();
    let store = await openStore(dir);
    await store.commit([put('a', 1)]);
    await store.compactNow(); // db.json holds seq 1; segment 1 stays for older generations
    await store.commit([put('b', 2)]);
    await store.close();
    open.splice(0);
    const segments = (await readdir(dir)).filter((name) => name.startsWith('journal-')).sort();
    expect(segments).toHaveLength(2);
    // Garbage in the covered segment: were it read, its line would be reported and skipped.
    await writeFile(join(dir, segments[0]!), 'not json\n');
    const errors: string[] = [];
    const log = {
      info: () => {},
      warn: () => {},
      error: (_: unknown, message: string) => errors.push(message),
    };
    store = await openStore(dir, { log });
    expect(keys(store)).toEqual(['a', 'b']);
    expect(errors).toEqual([]);
  });

  it('cuts off a torn journal tail left by a crash, and goes on appending', async () => {
    const dir = await tempDir();
    let store = await openStore(dir);
    await store.commit([put('whole', 1)]);
    await store.close();
    open.splice(0);
    const segment = (await readdir(dir)).find((name) => name.startsWith('journal-'))!;
    await appendFile(
      join(dir, segment),
      '{"s":2,"o":[{"type":"put","col":"portfolios","key":"torn"',
    );
    store = await openStore(dir);
    expect(keys(store)).toEqual(['whole']);
    await store.commit([put('next', 2)]);
    store = await reopen(store, dir);
    expect(keys(store)).toEqual(['next', 'whole']);
  });

  it('refuses a database written by a newer version, and releases the lock', async () => {
    const dir = await tempDir();
    await writeFile(
      join(dir, 'db.json'),
      JSON.stringify({ version: SCHEMA_VERSION + 1, journalSeq: 0, collections: {} }),
    );
    await expect(Store.open({ dataDir: dir })).rejects.toBeInstanceOf(
      UnsupportedSchemaVersionError,
    );
    expect(await readdir(dir)).not.toContain(LOCK_FILE_NAME);
    expect(((await readSnapshotDocument(join(dir, 'db.json'))) as any).version).toBe(
      SCHEMA_VERSION + 1,
    );
  });

  it('journals an embedded record once, by reference, and replays it from the state before', async () => {
    const dir = await tempDir();
    let store = await openStore(dir);
    const first = { title: 'first version '.repeat(20) };
    await store.commit([put('a', first)]);
    const kept = { note: 'superseded', snapshot: first };
    await store.commit([
      {
        type: 'put',
        col: 'revisions',
        key: 'a1',
        value: kept,
        embed: { field: 'snapshot', col: 'portfolios', key: 'a' },
      },
      put('a', { title: 'second' }),
    ]);
    expect(store.get('revisions', 'a1')).toBe(kept); // in memory: the very object
    const segment = (await readdir(dir)).find((name) => name.startsWith('journal-'))!;
    const journal = await readFile(join(dir, segment), 'utf8');
    expect(journal.split('first version').length - 1).toBe(20); // written once, in its own put
    store = await reopen(store, dir);
    expect(store.get('revisions', 'a1')).toEqual(kept);
    expect(store.get('portfolios', 'a')).toEqual({ title: 'second' });
    // An embedded value that is not the stored record is refused before anything is applied.
    expect(() =>
      store.commit([
        {
          type: 'put',
          col: 'revisions',
          key: 'a2',
          value: { snapshot: { title: 'second' } },
          embed: { field: 'snapshot', col: 'portfolios', key: 'a' },
        },
      ]),
    ).toThrow(/is not the record stored at portfolios\/a/);
    expect(store.get('revisions', 'a2')).toBeUndefined();
  });

  it('rejects commits after close', async () => {
    const store = await openStore(await tempDir());
    await store.close();
    await expect(store.commit([put('late', 1)])).rejects.toBeInstanceOf(StorageWriteError);
  });
});

describe('data directory lock', () => {
  it('lets one store own a directory; a second open fails with "in use" and touches nothing', async () => {
    const dir = await tempDir();
    const first = await openStore(dir);
    await first.commit([put('mine', 1)]);
    const before = await readdir(dir);
    const error = await Store.open({ dataDir: dir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataDirInUseError);
    expect((error as Error).message).toMatch(/in use/);
    expect((error as DataDirInUseError).ownerPid).toBe(process.pid);
    expect(await readdir(dir)).toEqual(before);
    await first.commit([put('still-mine', 1)]);
    // Closing releases it.
    const second = await reopen(first, dir);
    expect(keys(second)).toEqual(['mine', 'still-mine']);
  });

  it('takes over a stale lock of a dead process', async () => {
    const dir = await tempDir();
    const pid = deadPid();
    await writeFile(
      join(dir, LOCK_FILE_NAME),
      JSON.stringify({ pid, hostname: hostname(), token: 'old', startedAt: 1 }),
    );
    const store = await openStore(dir);
    const lock = JSON.parse(await readFile(join(dir, LOCK_FILE_NAME), 'utf8'));
    expect(lock.pid).toBe(process.pid);
    await store.commit([put('ok', 1)]);
  });

  it('takes over an unreadable lock file', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, LOCK_FILE_NAME), '');
    const store = await openStore(dir);
    expect(JSON.parse(await readFile(join(dir, LOCK_FILE_NAME), 'utf8')).pid).toBe(process.pid);
    expect(store).toBeTruthy();
  });

  it('refuses a lock held by a live process', async () => {
    const dir = await tempDir();
    // pid 1 is always alive.
    await writeFile(
      join(dir, LOCK_FILE_NAME),
      JSON.stringify({ pid: 1, hostname: hostname(), token: 'x', startedAt: 1 }),
    );
    await expect(Store.open({ dataDir: dir })).rejects.toBeInstanceOf(DataDirInUseError);
    expect(JSON.parse(await readFile(join(dir, LOCK_FILE_NAME), 'utf8')).pid).toBe(1);
  });
});

describe('Store.durableView', () => {
  it('reads the durable state at once while commits are being written, and a failed one never shows', async () => {
    const store = await openStore(await tempDir());
    await store.commit([put('a', { v: 1 }), put('b', { v: 1 })]);
    // Applied in memory at once, durable only later: a view taken now must not see them.
    const pending = store.commit([put('a', { v: 2 }), del('b'), put('c', { v: 1 })]);
    const later = store.commit([put('a', { v: 3 })]);
    const view = store.durableView(['portfolios']);
    expect(store.get('portfolios', 'a')).toEqual({ v: 3 });
    expect(view.get('portfolios', 'a')).toEqual({ v: 1 });
    expect(view.get('portfolios', 'b')).toEqual({ v: 1 });
    expect([...view.collection('portfolios').keys()].sort()).toEqual(['a', 'b']);
    await Promise.all([pending, later]);
    // The view is a copy: what was committed since does not change it.
    expect(view.get('portfolios', 'a')).toEqual({ v: 1 });
    expect(store.durableView(['portfolios']).get('portfolios', 'a')).toEqual({ v: 3 });

    store.injectWriteFault(new Error('disk full'));
    const failing = store.commit([put('a', { v: 4 })]);
    expect(store.durableView(['portfolios']).get('portfolios', 'a')).toEqual({ v: 3 });
    await expect(failing).rejects.toThrow(StorageWriteError);
    expect(keys(store)).toEqual(['a', 'c']);
  });
});
