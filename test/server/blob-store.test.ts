import { createHash } from 'node:crypto';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { receiveToFile } from '../../server/media/receive-file';
import { BlobStore } from '../../server/storage/blob-store';
import { download, fixtures, uploadMultipart } from '../helpers/file-fixtures';
import {
  makeTempDir,
  portfolioBody,
  startTestServer,
  type TestServer,
} from '../helpers/test-server';

const RECEIVE = { maxBytes: 1024 * 1024, maxPixels: 50e6, clientName: 'x' };
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
}

describe('BlobStore', () => {
  let dir: string;
  afterEach(() => rm(dir, { recursive: true, force: true }));

  async function openStore(referenced: Set<string>) {
    dir = await makeTempDir('blob-store-');
    return BlobStore.open({ root: join(dir, 'blobs'), isReferenced: (sha) => referenced.has(sha) });
  }

  async function put(store: BlobStore, bytes: Buffer) {
    const temp = store.tempPath();
    const { size, hashes, durable } = await receiveToFile([bytes], temp, RECEIVE);
    const received = { size, ...(await hashes) };
    return { received, release: await store.adopt(temp, received.sha256, durable) };
  }

  it('addresses content by sha256, stores it once and leaves no temp file', async () => {
    const store = await openStore(new Set());
    const bytes = Buffer.from('hello blob');
    const a = await put(store, bytes);
    const b = await put(store, bytes);
    expect(a.received.sha256).toBe(sha256(bytes));
    expect(store.pathOf(a.received.sha256)).toBe(
      join(dir, 'blobs', a.received.sha256.slice(0, 2), a.received.sha256.slice(2)),
    );
    expect((await store.read(a.received.sha256)).equals(bytes)).toBe(true);
    expect(await listFiles(join(dir, 'blobs'))).toEqual([a.received.sha256.slice(2)]);
    a.release();
    b.release();
  });

  it('adopts nothing when the temp file could not be made durable', async () => {
    const store = await openStore(new Set());
    const bytes = Buffer.from('never durable');
    const temp = store.tempPath();
    const { hashes, durable } = await receiveToFile([bytes], temp, RECEIVE);
    await durable;
    const { sha256: sha } = await hashes;
    const failedSync = Promise.reject(new Error('EIO: fsync failed'));
    failedSync.catch(() => {}); // as receiveToFile marks its own
    await expect(store.adopt(temp, sha, failedSync)).rejects.toThrow('EIO');
    expect(await listFiles(join(dir, 'blobs'))).toEqual([]); // neither the blob nor the temp file
    // The same bytes can be uploaded again.
    const again = await put(store, bytes);
    expect((await store.read(again.received.sha256)).equals(bytes)).toBe(true);
    again.release();
  });

  it('adopts a blob only once it is durable, without holding up other uploads', async () => {
    const store = await openStore(new Set());
    const receive = async (bytes: Buffer) => {
      const temp = store.tempPath();
      const { hashes, durable } = await receiveToFile([bytes], temp, RECEIVE);
      await durable;
      return { temp, sha: (await hashes).sha256 };
    };
    const slow = await receive(Buffer.from('slow to sync'));
    const same = await receive(Buffer.from('slow to sync'));
    const other = await receive(Buffer.from('another upload'));
    let synced!: () => void;
    const slowSync = new Promise<void>((resolve) => (synced = resolve));
    const settled: string[] = [];
    const first = store.adopt(slow.temp, slow.sha, slowSync).then((release) => {
      settled.push('first');
      return release;
    });
    // The same content, adopted while the first copy's fsync runs: it must wait for that one.
    const second = store.adopt(same.temp, same.sha, Promise.resolve()).then((release) => {
      settled.push('same content');
      return release;
    });
    const third = await store.adopt(other.temp, other.sha, Promise.resolve());
    settled.push('other');
    expect(settled).toEqual(['other']);
    synced();
    const releases = await Promise.all([first, second]);
    expect(settled.slice(1).sort()).toEqual(['first', 'same content']);
    expect((await listFiles(join(dir, 'blobs'))).sort()).toEqual(
      [slow.sha.slice(2), other.sha.slice(2)].sort(),
    );
    for (const release of [...releases, third]) release();
  });

  it('keeps a blob while an upload holds it or a record refers to it', async () => {
    const referenced = new Set<string>();
    const store = await openStore(referenced);
    const { received, release } = await put(store, Buffer.from('pinned'));
    store.collect([received.sha256]);
    await store.idle();
    expect(await listFiles(join(dir, 'blobs'))).toHaveLength(1); // pinned by the upload

    referenced.add(received.sha256); // the record was committed
    release();
    store.collect([received.sha256]);
    await store.idle();
    expect(await listFiles(join(dir, 'blobs'))).toHaveLength(1);

    referenced.delete(received.sha256); // the record let go of it
    store.collect([received.sha256]);
    await store.idle();
    expect(await listFiles(join(dir, 'blobs'))).toEqual([]);
  });

  it('sweeps temp files and unreferenced blobs, and keeps referenced ones', async () => {
    const referenced = new Set<string>();
    const store = await openStore(referenced);
    const kept = await put(store, Buffer.from('kept'));
    const orphan = await put(store, Buffer.from('orphan'));
    kept.release();
    orphan.release();
    referenced.add(kept.received.sha256);
    await writeFile(join(store.tempDir, 'upload.part'), 'half an upload');
    await mkdir(join(dir, 'blobs', 'zz'), { recursive: true });
    await writeFile(join(dir, 'blobs', 'zz', 'not-a-blob'), 'left alone');

    const fresh = await BlobStore.open({
      root: join(dir, 'blobs'),
      isReferenced: (sha) => referenced.has(sha),
    });
    expect(await fresh.sweep()).toEqual({ temp: 1, orphans: 1 });
    expect((await listFiles(join(dir, 'blobs'))).sort()).toEqual(
      [kept.received.sha256.slice(2), 'not-a-blob'].sort(),
    );
  });
});

describe('crash between blob and record', () => {
  let server: TestServer | undefined;
  afterEach(() => server?.close());

  it('sweeps the blob, partial uploads and stale thumbnails at the next start', async () => {
    server = await startTestServer();
    const id = (await server.request('POST', '/api/v1/portfolio', { body: portfolioBody() })).body
      .portfolioId;
    const cover = await uploadMultipart(
      server,
      `/api/v1/portfolio/${id}/cover`,
      await fixtures.png(),
    );
    expect(cover.status).toBe(200);

    // The state a crash after "blob durable" and before "record committed" leaves behind: a blob
    // nothing refers to, a thumbnail of it, and another upload's temp file cut short.
    const orphanBytes = await fixtures.jpeg();
    const temp = server.app.blobStore.tempPath();
    const { hashes, durable } = await receiveToFile([orphanBytes], temp, RECEIVE);
    const orphan = await hashes;
    await server.app.blobStore.adopt(temp, orphan.sha256, durable); // never released, never committed
    await writeFile(join(server.dataDir, 'thumbnails', `${orphan.sha256}-64.webp`), 'x');
    const dataDir = server.dataDir;
    await server.stop();
    await writeFile(join(dataDir, 'blobs', 'tmp', 'cut-short.part'), 'partial');
    const blobsBefore = await listFiles(join(dataDir, 'blobs'));
    expect(blobsBefore).toHaveLength(3);

    server = await startTestServer({ dataDir });
    expect(await listFiles(join(dataDir, 'blobs'))).toEqual([
      sha256(await fixtures.png()).slice(2),
    ]);
    expect(await readdir(join(dataDir, 'thumbnails'))).toEqual([]);
    const served = await download(server, `/api/v1/portfolio/${id}/files/${cover.body.fileId}`);
    expect(served.status).toBe(200);
    expect(served.bytes.equals(await fixtures.png())).toBe(true);
  });
});
