import { mkdir, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { receiveToFile } from '../../server/media/receive-file';
import { BlobStore } from '../../server/storage/blob-store';
import { fixtures } from '../helpers/file-fixtures';
import { makeTempDir } from '../helpers/test-server';

/*
 * One blob directory shared by several instances (PostgreSQL): another instance's uploads are not
 * pinned here, so what is young is left alone, and a blob another instance wrote is found on disk.
 */
const RECEIVE = { maxBytes: 1024 * 1024, maxPixels: 50e6, clientName: 'x' };
const GRACE = 60_000;

describe('BlobStore on a shared directory', () => {
  let dir: string;
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const open = async () =>
    BlobStore.open({ root: join(dir, 'blobs'), isReferenced: () => false, sharedGraceMs: GRACE });

  async function put(store: BlobStore, bytes: Buffer) {
    const temp = store.tempPath();
    const { hashes, durable } = await receiveToFile([bytes], temp, RECEIVE);
    const { sha256 } = await hashes;
    return { sha256, release: await store.adopt(temp, sha256, durable) };
  }

  const age = async (path: string, ms: number) => {
    const then = new Date(Date.now() - ms);
    await utimes(path, then, then);
  };

  it("finds another instance's blob, and keeps unreferenced blobs until they are older than the grace", async () => {
    dir = await makeTempDir('blob-shared-');
    const [one, two] = [await open(), await open()];
    const written = await put(one, fixtures.pdf());
    written.release();
    // The other instance adopts the same content: the blob is found on disk, not written again.
    const again = await put(two, fixtures.pdf());
    again.release();
    expect(again.sha256).toBe(written.sha256);
    expect((await two.read(written.sha256)).equals(fixtures.pdf())).toBe(true);

    // Unreferenced but young (another instance may be about to commit its record): kept.
    expect(await two.collectUnreferenced(new Set())).toBe(0);
    await age(one.pathOf(written.sha256), GRACE + 1000);
    expect(await two.collectUnreferenced(new Set())).toBe(1);
    await expect(one.read(written.sha256)).rejects.toThrow(/ENOENT/);
  });

  it("sweeps at start only the temp files older than the grace: not another instance's upload", async () => {
    dir = await makeTempDir('blob-shared-');
    const store = await open();
    await mkdir(store.tempDir, { recursive: true });
    const uploading = join(store.tempDir, 'uploading.part');
    const abandoned = join(store.tempDir, 'abandoned.part');
    await writeFile(uploading, 'x');
    await writeFile(abandoned, 'y');
    await age(abandoned, GRACE + 1000);
    expect(await store.sweep()).toEqual({ temp: 1, orphans: 0 });
    expect(await readdir(store.tempDir)).toEqual(['uploading.part']);
  });
});
