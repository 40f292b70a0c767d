import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { download, fixtures, uploadJson, uploadMultipart } from '../helpers/file-fixtures';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

describe('serving files', () => {
  let server: TestServer;
  let id: string;
  let jpeg: Buffer;
  let cover: any;
  let pdf: any;
  const file = (fileId: string) => `/api/v1/portfolio/${id}/files/${fileId}`;

  beforeAll(async () => {
    server = await startTestServer();
    const created = await server.request('POST', '/api/v1/portfolio', { body: portfolioBody() });
    id = created.body.portfolioId;
    jpeg = await fixtures.jpeg(600, 400);
    cover = (
      await uploadMultipart(server, `/api/v1/portfolio/${id}/cover`, jpeg, {
        filename: 'Façade "north".jpeg',
      })
    ).body;
    pdf = (
      await uploadJson(server, `/api/v1/portfolio/${id}/draftingProcess`, fixtures.pdf(), {
        filename: 'plan.pdf.exe',
      })
    ).body;
  });
  afterAll(() => server.close());

  it('streams an image inline with type, ETag, nosniff and a safe file name', async () => {
    const response = await download(server, file(cover.fileId));
    expect(response.status).toBe(200);
    expect(response.bytes.equals(jpeg)).toBe(true);
    expect(response.headers.get('content-type')).toBe('image/jpeg');
    expect(response.headers.get('content-length')).toBe(String(jpeg.length));
    expect(response.headers.get('etag')).toBe(`"${cover.md5Checksum}"`);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('accept-ranges')).toBe('bytes');
    expect(response.headers.get('content-security-policy')).toBeNull();
    expect(response.headers.get('content-disposition')).toBe(
      `inline; filename="Fa_ade _north_.jpeg"; filename*=UTF-8''Fa%C3%A7ade%20%22north%22.jpeg`,
    );
  });

  it('serves anything but raster images as a sandboxed attachment with the sniffed extension', async () => {
    const response = await download(server, file(pdf.fileID));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-security-policy')).toBe('sandbox');
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="plan.pdf.exe.pdf"; filename*=UTF-8''plan.pdf.exe.pdf`,
    );
  });

  it('answers HEAD with the headers and no body', async () => {
    const response = await fetch(server.url + file(cover.fileId), {
      method: 'HEAD',
      headers: { authorization: server.adminSession },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe(`"${cover.md5Checksum}"`);
    expect(response.headers.get('content-type')).toBe('image/jpeg');
    expect((await response.arrayBuffer()).byteLength).toBe(0);
  });

  it('answers 304 to a matching If-None-Match', async () => {
    const etag = `"${cover.md5Checksum}"`;
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const response = await download(server, file(cover.fileId), { 'if-none-match': header });
      expect(response.status, header).toBe(304);
      expect(response.bytes.length).toBe(0);
      expect(response.headers.get('etag')).toBe(etag);
    }
    const stale = await download(server, file(cover.fileId), { 'if-none-match': '"nope"' });
    expect(stale.status).toBe(200);
  });

  it('serves byte ranges with 206, and 416 outside the file', async () => {
    const size = jpeg.length;
    const cases: Array<[string, number, number]> = [
      ['bytes=0-99', 0, 99],
      ['bytes=100-', 100, size - 1],
      ['bytes=-50', size - 50, size - 1],
      [`bytes=10-${size + 1000}`, 10, size - 1],
    ];
    for (const [range, start, end] of cases) {
      const response = await download(server, file(cover.fileId), { range });
      expect(response.status, range).toBe(206);
      expect(response.headers.get('content-range')).toBe(`bytes ${start}-${end}/${size}`);
      expect(response.bytes.equals(jpeg.subarray(start, end + 1))).toBe(true);
    }
    const outside = await download(server, file(cover.fileId), { range: `bytes=${size}-` });
    expect(outside.status).toBe(416);
    expect(outside.headers.get('content-range')).toBe(`bytes */${size}`);
    expect(JSON.parse(outside.bytes.toString()).code).toBe('RANGE_NOT_SATISFIABLE');
    // Several ranges, or a malformed header, are ignored: the whole file.
    for (const range of ['bytes=0-1,5-6', 'lines=1-2', 'bytes=9-3']) {
      const whole = await download(server, file(cover.fileId), { range });
      expect(whole.status, range).toBe(200);
      expect(whole.bytes.length).toBe(size);
    }
    // If-Range with another ETag: the whole (changed) file instead of a piece of it.
    const ifRange = await download(server, file(cover.fileId), {
      range: 'bytes=0-9',
      'if-range': '"old"',
    });
    expect(ifRange.status).toBe(200);
  });

  it('answers 404 for unknown files and portfolios, 401 without a session', async () => {
    expect((await download(server, file('nope'))).status).toBe(404);
    const other = await download(server, `/api/v1/portfolio/nope/files/${cover.fileId}`);
    expect(other.status).toBe(404);
    const anonymous = await fetch(server.url + file(cover.fileId));
    expect(anonymous.status).toBe(401);
  });

  it('hides files of unpublished portfolios from viewers', async () => {
    const viewer = await server.userSession('viewer1', 'viewer');
    const response = await fetch(server.url + file(cover.fileId), {
      headers: { authorization: viewer },
    });
    expect(response.status).toBe(404);
  });

  it('makes WebP thumbnails of bounded widths, cached on disk and remade when missing', async () => {
    const path = `${file(cover.fileId)}/thumbnail?width=128`;
    const first = await download(server, path);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('image/webp');
    expect(first.headers.get('x-content-type-options')).toBe('nosniff');
    const meta = await sharp(first.bytes).metadata();
    expect(meta.format).toBe('webp');
    expect(meta.width).toBe(128);
    expect(meta.height).toBe(85);

    const dir = join(server.dataDir, 'thumbnails');
    const cached = (await readdir(dir)).filter((name) => name.endsWith('-128.webp'));
    expect(cached).toHaveLength(1);
    const before = await stat(join(dir, cached[0]!));
    const second = await download(server, path);
    expect(second.bytes.equals(first.bytes)).toBe(true);
    expect((await stat(join(dir, cached[0]!))).mtimeMs).toBe(before.mtimeMs);

    const etag = first.headers.get('etag')!;
    expect((await download(server, path, { 'if-none-match': etag })).status).toBe(304);

    await rm(join(dir, cached[0]!));
    const remade = await download(server, path);
    expect(remade.status).toBe(200);
    expect(remade.bytes.equals(first.bytes)).toBe(true);
  });

  it('thumbnails follow EXIF orientation and never enlarge', async () => {
    const rotated = await uploadMultipart(
      server,
      `/api/v1/portfolio/${id}/draftingProcess`,
      await fixtures.jpegRotated(),
      { filename: 'r.jpg' },
    );
    const response = await download(server, `${file(rotated.body.fileID)}/thumbnail?width=1024`);
    const meta = await sharp(response.bytes).metadata();
    expect([meta.width, meta.height]).toEqual([20, 40]);
  });

  it('refuses other widths (400) and files that are not images (415)', async () => {
    const odd = await download(server, `${file(cover.fileId)}/thumbnail?width=300`);
    expect(odd.status).toBe(400);
    expect(JSON.parse(odd.bytes.toString()).code).toBe('INVALID_QUERY');
    const pdfThumb = await download(server, `${file(pdf.fileID)}/thumbnail`);
    expect(pdfThumb.status).toBe(415);
  });

  it('returns every file with base64 data in the detail, with the interface spellings', async () => {
    const detail = await server.request('GET', `/api/v1/portfolio/${id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.cover.fileId).toBe(cover.fileId);
    expect(Buffer.from(detail.body.cover.data, 'base64').equals(jpeg)).toBe(true);
    const [plan] = detail.body.draftingProcess;
    expect(plan.fileID).toBe(pdf.fileID);
    expect(plan).not.toHaveProperty('fileId');
    expect(Buffer.from(plan.data, 'base64').equals(fixtures.pdf())).toBe(true);
    expect(plan).not.toHaveProperty('sha256');
  });

  it('lets field selection leave data out of the detail, and put cover.data in the list', async () => {
    const lean = await server.request(
      'GET',
      `/api/v1/portfolio/${id}?field=cover.fileId,cover.size`,
    );
    expect(lean.status).toBe(200);
    expect(lean.body).toEqual({ cover: { fileId: cover.fileId, size: jpeg.length } });
    const lists = await server.request('GET', `/api/v1/portfolio/${id}?field=draftingProcess`);
    expect(lists.body.draftingProcess[0].data).toBe(fixtures.pdf().toString('base64'));
    const list = await server.request('GET', '/api/v1/portfolio?field=portfolioId,cover.data');
    const item = list.body.lists.find((entry: any) => entry.portfolioId === id);
    expect(Buffer.from(item.cover.data, 'base64').equals(jpeg)).toBe(true);
  });
});
