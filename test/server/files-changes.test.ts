import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { download, fixtures, uploadJson, uploadMultipart } from '../helpers/file-fixtures';
import {
  embeddedStore,
  portfolioBody,
  startTestServer,
  type TestServer,
  embeddedOnly,
} from '../helpers/test-server';

/** Every file under the blob store (blobs and temp files), relative to it. */
async function blobFiles(server: TestServer): Promise<string[]> {
  const root = join(server.dataDir, 'blobs');
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1))
    .sort();
}

const thumbnailFiles = (server: TestServer) => readdir(join(server.dataDir, 'thumbnails'));

describe('file changes are portfolio updates', () => {
  let server: TestServer;
  afterEach(() => server?.close());

  async function newPortfolio(overrides: Record<string, unknown> = {}) {
    const created = await server.request('POST', '/api/v1/portfolio', {
      body: portfolioBody(overrides),
    });
    return created.body.portfolioId as string;
  }
  const detail = async (id: string) =>
    (await server.request('GET', `/api/v1/portfolio/${id}`)).body;

  it('bumps revision and modifiedTime on upload, PATCH and DELETE', async () => {
    server = await startTestServer();
    const id = await newPortfolio();
    const start = await detail(id);
    const added = await uploadJson(
      server,
      `/api/v1/portfolio/${id}/additionalDocument`,
      fixtures.text(),
      {
        filename: 'a.txt',
      },
    );
    expect(added.status).toBe(201);
    expect(added.headers.get('etag')).toBe(`"${start.revision + 1}"`);
    const afterUpload = await detail(id);
    expect(afterUpload.revision).toBe(start.revision + 1);
    expect(afterUpload.modifiedTime).toBeGreaterThanOrEqual(start.modifiedTime);

    const patched = await server.request(
      'PATCH',
      `/api/v1/portfolio/${id}/files/${added.body.fileID}`,
      {
        body: { description: 'Room list' },
      },
    );
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ fileID: added.body.fileID, description: 'Room list' });
    expect(patched.body.modifiedTime).toBeGreaterThanOrEqual(added.body.modifiedTime);
    expect(patched.body.createdTime).toBe(added.body.createdTime);
    expect((await detail(id)).additionalDocument[0].description).toBe('Room list');

    const removed = await server.request(
      'DELETE',
      `/api/v1/portfolio/${id}/files/${added.body.fileID}`,
    );
    expect(removed.status).toBe(200);
    expect(removed.body.fileID).toBe(added.body.fileID);
    const end = await detail(id);
    expect(end.revision).toBe(start.revision + 3);
    expect(end.additionalDocument).toEqual([]);

    const again = await server.request(
      'DELETE',
      `/api/v1/portfolio/${id}/files/${added.body.fileID}`,
    );
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('FILE_NOT_FOUND');
  });

  it('follows the update rules: viewers 403, editors only in allowEdit categories', async () => {
    server = await startTestServer();
    const id = await newPortfolio({ category: 'Interior' });
    const png = await fixtures.png();
    const viewer = await server.userSession('viewer1', 'viewer');
    const outsider = await server.userSession('editor1', 'editor', ['Garden']);
    const insider = await server.userSession('editor2', 'editor', ['Interior']);
    const path = `/api/v1/portfolio/${id}/cover`;

    // A viewer may change nothing: 403 before the portfolio is looked up, visible to them or not.
    expect((await uploadMultipart(server, path, png, { session: viewer })).status).toBe(403);
    await server.request('PUT', `/api/v1/portfolio/${id}`, {
      body: { ...portfolioBody({ category: 'Interior' }), command: 'publish' },
    });
    const byViewer = await uploadMultipart(server, path, png, { session: viewer });
    expect(byViewer.status).toBe(403);
    const byOutsider = await uploadJson(server, path, png, { session: outsider });
    expect(byOutsider.status).toBe(403);
    expect(byOutsider.body.code).toBe('CATEGORY_NOT_ALLOWED');
    const byInsider = await uploadMultipart(server, path, png, { session: insider });
    expect(byInsider.status).toBe(200);

    const fileId = byInsider.body.fileId;
    const patch = await server.request('PATCH', `/api/v1/portfolio/${id}/files/${fileId}`, {
      body: { description: 'x' },
      session: outsider,
    });
    expect(patch.status).toBe(403);
    const del = await server.request('DELETE', `/api/v1/portfolio/${id}/files/${fileId}`, {
      session: viewer,
    });
    expect(del.status).toBe(403);
    // Viewers may read files of published, active portfolios.
    const read = await fetch(`${server.url}/api/v1/portfolio/${id}/files/${fileId}`, {
      headers: { authorization: viewer },
    });
    expect(read.status).toBe(200);
    expect(await blobFiles(server)).toHaveLength(1); // refused uploads left nothing behind
  });

  it('makes a change conditional with If-Match', async () => {
    server = await startTestServer();
    const id = await newPortfolio();
    const { revision } = await detail(id);
    const stale = await uploadMultipart(
      server,
      `/api/v1/portfolio/${id}/cover`,
      await fixtures.png(),
      {
        headers: { 'if-match': `"${revision - 1 || 99}"` },
      },
    );
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe('REVISION_CONFLICT');
    const fresh = await uploadMultipart(
      server,
      `/api/v1/portfolio/${id}/cover`,
      await fixtures.png(),
      {
        headers: { 'if-match': `"${revision}"` },
      },
    );
    expect(fresh.status).toBe(200);
    expect(await blobFiles(server)).toHaveLength(1);
  });

  it('refuses an upload with a stale If-Match before reading its bytes', async () => {
    // A small file limit: bytes that were read would answer 413.
    server = await startTestServer({ limits: { fileBytes: 1024 } });
    const id = await newPortfolio();
    await server.request('PUT', `/api/v1/portfolio/${id}`, { body: portfolioBody() });
    const big = Buffer.alloc(64 * 1024, 1);
    const stale = await uploadMultipart(server, `/api/v1/portfolio/${id}/draftingProcess`, big, {
      headers: { 'if-match': '"1"' },
    });
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe('REVISION_CONFLICT');
    expect((await detail(id)).revision).toBe(2);
    expect(await blobFiles(server)).toEqual([]);
  });

  it('stores identical content once and removes a blob with its last reference', async () => {
    // Without history: a kept revision would otherwise still refer to the removed files.
    server = await startTestServer({ history: { enabled: false } });
    const a = await newPortfolio();
    const b = await newPortfolio();
    const jpeg = await fixtures.jpeg();
    const first = await uploadMultipart(server, `/api/v1/portfolio/${a}/cover`, jpeg);
    const second = await uploadJson(server, `/api/v1/portfolio/${b}/draftingProcess`, jpeg);
    expect(await blobFiles(server)).toHaveLength(1);
    const [blob] = await blobFiles(server);
    expect(blob!.replace('/', '')).toMatch(/^[0-9a-f]{64}$/);
    await download(server, `/api/v1/portfolio/${a}/files/${first.body.fileId}/thumbnail?width=64`);
    expect(await thumbnailFiles(server)).toHaveLength(1);

    await server.request('DELETE', `/api/v1/portfolio/${a}/files/${first.body.fileId}`);
    await server.app.blobStore.idle();
    expect(await blobFiles(server)).toHaveLength(1); // b still refers to it
    await server.request('DELETE', `/api/v1/portfolio/${b}/files/${second.body.fileID}`);
    await server.app.blobStore.idle();
    expect(await blobFiles(server)).toEqual([]);
    expect(await thumbnailFiles(server)).toEqual([]);
  });

  it('removes the old cover blob when the cover is replaced (history off)', async () => {
    server = await startTestServer({ history: { enabled: false } });
    const id = await newPortfolio();
    const old = await uploadMultipart(
      server,
      `/api/v1/portfolio/${id}/cover`,
      await fixtures.png(),
    );
    await uploadMultipart(server, `/api/v1/portfolio/${id}/cover`, await fixtures.webp());
    await server.app.blobStore.idle();
    expect(await blobFiles(server)).toHaveLength(1);
    const gone = await download(server, `/api/v1/portfolio/${id}/files/${old.body.fileId}`);
    expect(gone.status).toBe(404);
    expect((await detail(id)).cover.mimeType).toBe('image/webp');
  });

  it('refuses the 21st file of a list with 413 and changes nothing', async () => {
    server = await startTestServer();
    const id = await newPortfolio();
    const path = `/api/v1/portfolio/${id}/additionalDocument`;
    for (let i = 0; i < 20; i++) {
      const response = await uploadJson(server, path, Buffer.from(`note ${i}\n`), {
        filename: `n${i}.txt`,
      });
      expect(response.status).toBe(201);
    }
    const before = await detail(id);
    const multipart = await uploadMultipart(server, path, Buffer.from('one more\n'));
    expect(multipart.status).toBe(413);
    expect(multipart.body.code).toBe('TOO_MANY_FILES');
    const json = await uploadJson(server, path, Buffer.from('one more\n'));
    expect(json.status).toBe(413);
    const after = await detail(id);
    expect(after.revision).toBe(before.revision);
    expect(after.additionalDocument).toHaveLength(20);
    expect(await blobFiles(server)).toHaveLength(20);
    // The other list has its own room.
    const drafting = await uploadMultipart(
      server,
      `/api/v1/portfolio/${id}/draftingProcess`,
      fixtures.pdf(),
    );
    expect(drafting.status).toBe(201);
  });

  it('refuses an oversized upload with 413, leaving no blob and no temp file', async () => {
    server = await startTestServer({ limits: { fileBytes: 64 * 1024, bodyBytes: 200 * 1024 } });
    const id = await newPortfolio();
    const big = await fixtures.jpeg(800, 800); // noise: well over 64 KiB
    expect(big.length).toBeGreaterThan(64 * 1024);
    const before = await detail(id);
    const multipart = await uploadMultipart(server, `/api/v1/portfolio/${id}/cover`, big);
    expect(multipart.status).toBe(413);
    expect(multipart.body.code).toBe('PAYLOAD_TOO_LARGE');
    expect(multipart.body.message).toMatch(/limit/);
    // Under the Content-Length shortcut: the stream itself is cut at the limit.
    const streamed = await uploadMultipart(
      server,
      `/api/v1/portfolio/${id}/additionalDocument`,
      Buffer.alloc(100 * 1024, 'a'),
    );
    expect(streamed.status).toBe(413);
    const json = await uploadJson(server, `/api/v1/portfolio/${id}/cover`, big);
    expect(json.status).toBe(413);
    // A JSON body over the body limit is refused by the parser, before any decoding.
    const huge = await uploadJson(
      server,
      `/api/v1/portfolio/${id}/cover`,
      Buffer.alloc(300 * 1024),
    );
    expect(huge.status).toBe(413);
    // A file just at the limit is fine.
    const fits = await uploadMultipart(
      server,
      `/api/v1/portfolio/${id}/additionalDocument`,
      Buffer.alloc(64 * 1024, 'a'),
    );
    expect(fits.status).toBe(201);
    await server.app.blobStore.idle();
    const after = await detail(id);
    expect(after.revision).toBe(before.revision + 1);
    expect(after.cover).toBeNull();
    expect(await blobFiles(server)).toHaveLength(1);
  });

  it('refuses an image over the pixel limit with 413', async () => {
    server = await startTestServer({ limits: { imagePixels: 1000 } });
    const id = await newPortfolio();
    const response = await uploadMultipart(
      server,
      `/api/v1/portfolio/${id}/cover`,
      await fixtures.jpeg(40, 30),
    );
    expect(response.status).toBe(413);
    expect(response.body.code).toBe('IMAGE_TOO_LARGE');
    expect(await blobFiles(server)).toEqual([]);
  });

  embeddedOnly('injects a journal write fault')(
    'answers 500 when the record cannot be saved, and removes the new blob again',
    async () => {
      server = await startTestServer();
      const id = await newPortfolio();
      const before = await detail(id);
      embeddedStore(server.app).injectWriteFault(new Error('disk full'));
      const response = await uploadMultipart(
        server,
        `/api/v1/portfolio/${id}/cover`,
        await fixtures.png(),
      );
      expect(response.status).toBe(500);
      expect(response.body.code).toBe('STORAGE_FAILURE');
      await server.app.blobStore.idle();
      expect(await blobFiles(server)).toEqual([]);
      const after = await detail(id);
      expect(after.revision).toBe(before.revision);
      expect(after.cover).toBeNull();
    },
  );
});
