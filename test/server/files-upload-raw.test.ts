import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { download, fixtures, uploadMultipart, uploadRaw } from '../helpers/file-fixtures';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');

describe('file uploads: raw bodies (the file as the body, named by Content-Disposition)', () => {
  let server: TestServer;
  let id: string;
  const base = () => `/api/v1/portfolio/${id}`;
  const tempFiles = () => readdir(join(server.dataDir, 'blobs', 'tmp'));

  beforeAll(async () => {
    server = await startTestServer({ limits: { fileBytes: 2 * 1024 * 1024 } });
    const created = await server.request('POST', '/api/v1/portfolio', { body: portfolioBody() });
    id = created.body.portfolioId;
  });
  afterAll(() => server.close());

  it('sets a JPEG cover, answering as multipart does, and serves back the same bytes', async () => {
    const bytes = await fixtures.jpegRotated();
    const response = await uploadRaw(server, `${base()}/cover`, bytes, {
      contentType: 'image/jpeg',
      disposition: 'attachment; filename="front.jpg"',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toMatch(/^"\d+"$/);
    expect(response.body).toEqual({
      fileId: expect.any(String),
      originalFilename: 'front.jpg',
      fullFileExtension: 'jpg',
      mimeType: 'image/jpeg',
      description: '',
      createdTime: expect.any(Number),
      modifiedTime: expect.any(Number),
      md5Checksum: md5(bytes),
      size: bytes.length,
      dimention: { width: 20, height: 40 },
    });
    const served = await download(server, `${base()}/files/${response.body.fileId}`);
    expect(served.bytes.equals(bytes)).toBe(true);
  });

  it('appends a PNG and a PDF to draftingProcess (201, File object with fileID)', async () => {
    const png = await fixtures.png();
    const image = await uploadRaw(server, `${base()}/draftingProcess`, png, {
      contentType: 'image/png',
      disposition: 'attachment; filename="plan.png"',
    });
    expect(image.status).toBe(201);
    expect(image.body).toMatchObject({
      fileID: expect.any(String),
      originalFilename: 'plan.png',
      mimeType: 'image/png',
      dimention: { width: 30, height: 10 },
      md5Checksum: md5(png),
    });
    const pdf = fixtures.pdf();
    const document = await uploadRaw(server, `${base()}/draftingProcess`, pdf, {
      contentType: 'application/pdf',
      disposition: 'attachment; filename=section.pdf',
    });
    expect(document.status).toBe(201);
    expect(document.body).toMatchObject({
      originalFilename: 'section.pdf',
      mimeType: 'application/pdf',
      fullFileExtension: 'pdf',
      dimention: null,
      size: pdf.length,
    });
  });

  it('takes a text file sent as text/plain as its bytes, not as a parsed string', async () => {
    const text = fixtures.text();
    const response = await uploadRaw(server, `${base()}/additionalDocument`, text, {
      contentType: 'text/plain; charset=utf-8',
      disposition: 'attachment; filename="notes.txt"',
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ mimeType: 'text/plain', md5Checksum: md5(text) });
  });

  it("reads filename*=UTF-8'' (RFC 6266), which wins over filename", async () => {
    const response = await uploadRaw(server, `${base()}/additionalDocument`, fixtures.pdf(), {
      disposition: `attachment; filename="Entwurf.pdf"; filename*=UTF-8''Entw%C3%BCrfe%20%E2%80%94%20Haus.pdf`,
    });
    expect(response.status).toBe(201);
    expect(response.body.originalFilename).toBe('Entwürfe — Haus.pdf');
  });

  it('keeps only the last segment of a path-like name', async () => {
    const response = await uploadRaw(server, `${base()}/additionalDocument`, fixtures.pdf(), {
      disposition: 'attachment; filename="../../etc/passwd.pdf"',
    });
    expect(response.status).toBe(201);
    expect(response.body.originalFilename).toBe('passwd.pdf');
  });

  it('sniffs the type: a wrong Content-Type gets the very answer multipart gives', async () => {
    // A PDF sent as a PNG for the cover: 415, word for word as multipart answers it.
    const raw = await uploadRaw(server, `${base()}/cover`, fixtures.pdf(), {
      contentType: 'image/png',
      disposition: 'attachment; filename="photo.png"',
    });
    const multipart = await uploadMultipart(server, `${base()}/cover`, fixtures.pdf(), {
      filename: 'photo.png',
      contentType: 'image/png',
    });
    expect(raw.status).toBe(415);
    expect(raw.body).toEqual(multipart.body);
    expect(raw.body.code).toBe('UNSUPPORTED_FILE_TYPE');
    // A PNG labelled JPEG is a PNG, as with multipart.
    const png = await uploadRaw(server, `${base()}/cover`, await fixtures.png(), {
      contentType: 'image/jpeg',
      disposition: 'attachment; filename="holiday.jpg"',
    });
    expect(png.status).toBe(200);
    expect(png.body).toMatchObject({ originalFilename: 'holiday.jpg', mimeType: 'image/png' });
    expect(await tempFiles()).toEqual([]);
  });

  it('refuses a truncated JPEG and markup as multipart does', async () => {
    const cut = await uploadRaw(server, `${base()}/cover`, await fixtures.truncatedJpeg(), {
      contentType: 'image/jpeg',
    });
    expect(cut.status).toBe(415);
    expect(cut.body.message).toMatch(/incomplete/);
    const html = await uploadRaw(server, `${base()}/additionalDocument`, fixtures.html(), {
      contentType: 'text/html',
      disposition: 'attachment; filename="page.txt"',
    });
    expect(html.status).toBe(415);
    expect(html.body.code).toBe('UNSUPPORTED_FILE_TYPE');
  });

  it('answers a clear 400 when the file is not named, or the header is malformed', async () => {
    const before = (await server.request('GET', `${base()}`)).body.revision;
    const missing = await uploadRaw(server, `${base()}/draftingProcess`, fixtures.pdf(), {
      disposition: null,
    });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('VALIDATION_FAILED');
    expect(missing.body.message).toContain('Content-Disposition: attachment; filename=');
    expect(missing.body.details).toEqual([
      { field: 'headers.content-disposition', message: 'must name the file' },
    ]);
    const nameless = await uploadRaw(server, `${base()}/draftingProcess`, fixtures.pdf(), {
      disposition: 'attachment',
    });
    expect(nameless.status).toBe(400);
    const malformed = await uploadRaw(server, `${base()}/draftingProcess`, fixtures.pdf(), {
      disposition: 'attachment; filename="unterminated',
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.message).toMatch(/not valid/);
    expect((await server.request('GET', `${base()}`)).body.revision).toBe(before);
  });

  it('refuses a viewer with 403 before it looks at the name (authorization first)', async () => {
    const viewer = await server.userSession('raw-viewer', 'viewer');
    const response = await uploadRaw(server, `${base()}/draftingProcess`, fixtures.pdf(), {
      session: viewer,
      disposition: null,
    });
    expect(response.status).toBe(403);
  });

  it('refuses a body over the limit with 413 from its Content-Length, nothing kept', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024, 1);
    const response = await uploadRaw(server, `${base()}/additionalDocument`, big, {
      disposition: 'attachment; filename="big.pdf"',
    });
    expect(response.status).toBe(413);
    expect(response.body.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await tempFiles()).toEqual([]);
  });

  it('refuses a chunked body that grows over the limit with 413', async () => {
    const path = `${base()}/additionalDocument`;
    const chunk = Buffer.alloc(256 * 1024, 7);
    const status = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(`${server.url}${path}`, {
        method: 'POST',
        headers: {
          authorization: server.adminSession,
          'content-type': 'application/octet-stream',
          'content-disposition': 'attachment; filename="stream.bin"',
        },
      });
      request.on('response', (response) => {
        response.resume();
        resolve(response.statusCode!);
      });
      request.on('error', reject);
      let sent = 0;
      const pump = () => {
        while (sent < 4 * 1024 * 1024) {
          sent += chunk.length;
          if (!request.write(chunk)) return request.once('drain', pump);
        }
        request.end();
      };
      pump();
    });
    expect(status).toBe(413);
    expect(await tempFiles()).toEqual([]);
  });

  // Without the early refusal the server would wait for bytes that never come: a hang.
  it('answers a pixel bomb 413 from its header while the client is still sending', async () => {
    const start = Buffer.concat([fixtures.pixelBomb(), Buffer.alloc(300 * 1024)]);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = httpRequest(`${server.url}${base()}/cover`, {
        method: 'PUT',
        headers: {
          authorization: server.adminSession,
          'content-type': 'image/png',
          'content-length': String(start.length + 1024 * 1024),
          'content-disposition': 'attachment; filename="bomb.png"',
        },
      });
      request.on('response', (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body }));
      });
      request.on('error', reject);
      request.write(start); // the rest of the announced body never comes
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'IMAGE_TOO_LARGE' });
    expect(await tempFiles()).toEqual([]);
  });

  it('removes the temp file of a client that goes away mid-body', async () => {
    const path = `${base()}/additionalDocument`;
    const before = (await server.request('GET', `${base()}`)).body.revision;
    await new Promise<void>((resolve) => {
      const request = httpRequest(`${server.url}${path}`, {
        method: 'POST',
        headers: {
          authorization: server.adminSession,
          'content-type': 'application/pdf',
          'content-length': String(1024 * 1024),
          'content-disposition': 'attachment; filename="cut.pdf"',
        },
      });
      request.on('error', () => resolve());
      request.write(fixtures.pdf());
      request.write(Buffer.alloc(200 * 1024));
      // Wait until the server has started writing the upload, then cut the connection.
      const poll = setInterval(async () => {
        if ((await tempFiles()).length > 0) {
          clearInterval(poll);
          request.destroy();
          resolve();
        }
      }, 20);
    });
    await expect.poll(tempFiles, { timeout: 20_000 }).toEqual([]);
    expect((await server.request('GET', `${base()}`)).body.revision).toBe(before);
  });
});
