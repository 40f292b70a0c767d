import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures, uploadJson, uploadMultipart } from '../helpers/file-fixtures';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');
const avifSupported = Boolean(sharp.format.heif?.output?.buffer);

describe('file uploads: inspection', () => {
  let server: TestServer;
  let id: string;
  const base = () => `/api/v1/portfolio/${id}`;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  beforeAll(async () => {
    const created = await server.request('POST', '/api/v1/portfolio', { body: portfolioBody() });
    id = created.body.portfolioId;
  });

  it('sets the cover from a JPEG with EXIF orientation 6: dimensions after rotation', async () => {
    const bytes = await fixtures.jpegRotated();
    const response = await uploadMultipart(server, `${base()}/cover`, bytes, {
      filename: 'front.jpg',
      contentType: 'image/jpeg',
      description: 'The front',
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      fileId: expect.any(String),
      originalFilename: 'front.jpg',
      fullFileExtension: 'jpg',
      mimeType: 'image/jpeg',
      description: 'The front',
      createdTime: expect.any(Number),
      modifiedTime: expect.any(Number),
      md5Checksum: md5(bytes),
      size: bytes.length,
      dimention: { width: 20, height: 40 },
    });
    expect(response.body).not.toHaveProperty('data');
    expect(response.body).not.toHaveProperty('sha256');
  });

  const images = [
    ['PNG', fixtures.png, 'image/png', 'png', { width: 30, height: 10 }],
    ['WebP', fixtures.webp, 'image/webp', 'webp', { width: 16, height: 12 }],
    ['GIF', fixtures.gif, 'image/gif', 'gif', { width: 12, height: 8 }],
    ['TIFF', fixtures.tiff, 'image/tiff', 'tif', { width: 10, height: 10 }],
  ] as const;
  for (const [name, make, mimeType, extension, dimention] of images) {
    it(`accepts a ${name} as cover and in both lists (JSON and multipart)`, async () => {
      const bytes = await make();
      const cover = await uploadJson(server, `${base()}/cover`, bytes, { filename: 'x' });
      expect(cover.status).toBe(200);
      expect(cover.body).toMatchObject({ mimeType, fullFileExtension: extension, dimention });
      const drafting = await uploadMultipart(server, `${base()}/draftingProcess`, bytes);
      expect(drafting.status).toBe(201);
      expect(drafting.body).toMatchObject({ fileID: expect.any(String), mimeType, dimention });
      expect(drafting.body).not.toHaveProperty('fileId');
      const additional = await uploadJson(server, `${base()}/additionalDocument`, bytes);
      expect(additional.status).toBe(201);
      expect(additional.body.md5Checksum).toBe(md5(bytes));
    });
  }

  it.runIf(avifSupported)('accepts an AVIF cover', async () => {
    const bytes = await fixtures.avif();
    const response = await uploadMultipart(server, `${base()}/cover`, bytes, {
      filename: 'a.avif',
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      mimeType: 'image/avif',
      fullFileExtension: 'avif',
      dimention: { width: 16, height: 16 },
    });
  });

  it('takes the type from the bytes, not the name or Content-Type', async () => {
    const bytes = await fixtures.png();
    const response = await uploadMultipart(server, `${base()}/cover`, bytes, {
      filename: 'holiday.jpg',
      contentType: 'image/jpeg',
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      originalFilename: 'holiday.jpg',
      mimeType: 'image/png',
      fullFileExtension: 'png',
    });
    const disguised = await uploadMultipart(server, `${base()}/cover`, fixtures.pdf(), {
      filename: 'photo.png',
      contentType: 'image/png',
    });
    expect(disguised.status).toBe(415);
    expect(disguised.body.code).toBe('UNSUPPORTED_FILE_TYPE');
  });

  it('accepts a PDF in draftingProcess but not as cover', async () => {
    const pdf = fixtures.pdf();
    const drafting = await uploadMultipart(server, `${base()}/draftingProcess`, pdf, {
      filename: 'plan.pdf',
    });
    expect(drafting.status).toBe(201);
    expect(drafting.body).toMatchObject({
      mimeType: 'application/pdf',
      fullFileExtension: 'pdf',
      dimention: null,
      size: pdf.length,
    });
    const cover = await uploadMultipart(server, `${base()}/cover`, pdf, { filename: 'plan.pdf' });
    expect(cover.status).toBe(415);
  });

  it('accepts text and CSV only as additional documents', async () => {
    const text = await uploadJson(server, `${base()}/additionalDocument`, fixtures.text(), {
      filename: 'notes.md',
    });
    expect(text.status).toBe(201);
    expect(text.body).toMatchObject({ mimeType: 'text/plain', fullFileExtension: 'txt' });
    const csv = await uploadMultipart(server, `${base()}/additionalDocument`, fixtures.csv(), {
      filename: 'rooms.csv',
    });
    expect(csv.status).toBe(201);
    expect(csv.body).toMatchObject({ mimeType: 'text/csv', fullFileExtension: 'csv' });
    const drafting = await uploadJson(server, `${base()}/draftingProcess`, fixtures.text());
    expect(drafting.status).toBe(415);
  });

  it('refuses markup, unknown binaries and empty files with 415 everywhere', async () => {
    for (const [bytes, filename] of [
      [fixtures.html(), 'page.txt'],
      [fixtures.svg(), 'logo.txt'],
      [fixtures.binary(), 'data.txt'],
      [Buffer.alloc(0), 'empty.txt'],
    ] as const) {
      const response = await uploadMultipart(server, `${base()}/additionalDocument`, bytes, {
        filename,
        contentType: 'text/plain',
      });
      expect(response.status, filename).toBe(415);
      expect(response.body.code).toBe('UNSUPPORTED_FILE_TYPE');
    }
  });

  it('refuses a truncated JPEG', async () => {
    const response = await uploadMultipart(
      server,
      `${base()}/cover`,
      await fixtures.truncatedJpeg(),
      { filename: 'cut.jpg' },
    );
    expect(response.status).toBe(415);
    expect(response.body.message).toMatch(/incomplete/);
  });

  // That the refusal comes from the header, before the rest of the body, is shown in
  // receive-file.test.ts: there the 413 arrives while the client is still sending.
  it('refuses a 20000×20000 pixel bomb from its header, before decoding', async () => {
    const response = await uploadMultipart(server, `${base()}/cover`, fixtures.pixelBomb(), {
      filename: 'bomb.png',
    });
    expect(response.status).toBe(413);
    expect(response.body.code).toBe('IMAGE_TOO_LARGE');
    expect(response.body.message).toContain('20000×20000');
    expect(await readdir(join(server.dataDir, 'blobs', 'tmp'))).toEqual([]);
  });

  it('keeps only the last segment of path-like names and shortens very long ones', async () => {
    const bytes = await fixtures.png();
    const cases: Array<[string, string]> = [
      ['../../etc/passwd.png', 'passwd.png'],
      ['C:\\Users\\me\\Desktop\\plan.png', 'plan.png'],
      ['..', 'file'],
      ['evil\u202Egnp.exe', 'evilgnp.exe'],
      ['line\r\nbreak.png', 'linebreak.png'],
    ];
    for (const [sent, kept] of cases) {
      const response = await uploadJson(server, `${base()}/additionalDocument`, bytes, {
        filename: sent,
      });
      expect(response.status, sent).toBe(201);
      expect(response.body.originalFilename).toBe(kept);
    }
    const long = `${'ä'.repeat(400)}.png`;
    const response = await uploadMultipart(server, `${base()}/cover`, bytes, { filename: long });
    expect(response.status).toBe(200);
    expect([...response.body.originalFilename]).toHaveLength(255);
    expect(response.body.originalFilename.endsWith('ää.png')).toBe(true);
  });

  it('rejects malformed uploads with 400', async () => {
    const notBase64 = await server.request('POST', `${base()}/additionalDocument`, {
      body: { originalFilename: 'a.txt', data: 'not base64 at all!' },
    });
    expect(notBase64.status).toBe(400);
    expect(notBase64.body.details[0].field).toBe('body.data');
    const unknown = await server.request('POST', `${base()}/additionalDocument`, {
      body: { originalFilename: 'a.txt', data: 'aGk=', mimeType: 'text/plain' },
    });
    expect(unknown.status).toBe(400);
    const form = new FormData();
    form.append('description', 'no file here');
    const noFile = await fetch(`${server.url}${base()}/additionalDocument`, {
      method: 'POST',
      headers: { authorization: server.adminSession },
      body: form,
    });
    expect(noFile.status).toBe(400);
  });

  it('accepts a data URL in JSON uploads', async () => {
    const bytes = await fixtures.png();
    const response = await server.request('PUT', `${base()}/cover`, {
      body: {
        originalFilename: 'p.png',
        data: `data:image/png;base64,${bytes.toString('base64')}`,
      },
    });
    expect(response.status).toBe(200);
    expect(response.body.md5Checksum).toBe(md5(bytes));
  });
});
