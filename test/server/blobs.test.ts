import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile, utimes } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures, uploadRaw } from '../helpers/file-fixtures';
import {
  checkAnswer,
  portfolioBody,
  startTestServer,
  type TestServer,
} from '../helpers/test-server';
import { PartialUploads } from '../../server/storage/partial-uploads';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const MB = 1024 * 1024;

describe('blobs: missing, resumable upload, download (sync)', () => {
  let server: TestServer;
  let editor: string;
  let viewer: string;
  const partialDir = () => join(server.dataDir, 'blobs', 'partial');
  const blobPath = (sha: string) => join(server.dataDir, 'blobs', sha.slice(0, 2), sha.slice(2));

  beforeAll(async () => {
    server = await startTestServer();
    editor = await server.userSession('blob-editor', 'editor');
    viewer = await server.userSession('blob-viewer', 'viewer');
  });
  afterAll(() => server.close());

  /** A PUT of raw bytes over real HTTP; every answer is checked against the document. */
  async function put(sha: string, bytes: Buffer, headers: Record<string, string> = {}) {
    const path = `/api/v1/blobs/${sha}`;
    const response = await fetch(server.url + path, {
      method: 'PUT',
      headers: {
        authorization: editor,
        'content-type': 'application/octet-stream',
        ...headers,
      },
      body: new Uint8Array(bytes),
    });
    const text = await response.text();
    const body = text ? JSON.parse(text) : text;
    checkAnswer(server.app, 'PUT', path, response, body);
    return { status: response.status, headers: response.headers, body };
  }

  async function get(sha: string, headers: Record<string, string> = {}, session = editor) {
    const path = `/api/v1/blobs/${sha}`;
    const response = await fetch(server.url + path, {
      headers: { authorization: session, ...headers },
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    const json = response.headers.get('content-type')?.includes('json');
    checkAnswer(server.app, 'GET', path, response, json ? JSON.parse(bytes.toString()) : bytes);
    return { status: response.status, headers: response.headers, bytes };
  }

  const head = (sha: string, session = editor) =>
    server.request('HEAD', `/api/v1/blobs/${sha}`, { session });

  it('uploads a whole blob: 201, then HEAD has it, and a second PUT is 200', async () => {
    const bytes = randomBytes(300 * 1024);
    const sha = sha256(bytes);
    const missing = await head(sha);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('upload-offset')).toBe('0');

    const created = await put(sha, bytes);
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ sha256: sha, size: bytes.length });
    expect((await readFile(blobPath(sha))).equals(bytes)).toBe(true);
    expect(await readdir(partialDir())).toEqual([]);

    const present = await head(sha);
    expect(present.status).toBe(200);
    expect(present.headers.get('content-length')).toBe(String(bytes.length));
    const again = await put(sha, bytes);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ sha256: sha, size: bytes.length });
  });

  it('lists the missing blobs in request order', async () => {
    const stored = randomBytes(1000);
    expect((await put(sha256(stored), stored)).status).toBe(201);
    const a = sha256(randomBytes(10));
    const b = sha256(randomBytes(10));
    const response = await server.request('POST', '/api/v1/blobs/missing', {
      session: editor,
      body: { sha256: [b, sha256(stored), a] },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ missing: [b, a] });

    const tooMany = await server.request('POST', '/api/v1/blobs/missing', {
      session: editor,
      body: { sha256: Array.from({ length: 1001 }, () => a) },
    });
    expect(tooMany.status).toBe(400);
    const notHex = await server.request('POST', '/api/v1/blobs/missing', {
      session: editor,
      body: { sha256: ['abc'] },
    });
    expect(notHex.status).toBe(400);
    expect(notHex.body.details[0].field).toMatch(/^body\.sha256/);
  });

  it('refuses bytes that do not match the hash: 400, nothing kept', async () => {
    const bytes = randomBytes(200 * 1024);
    const claimed = sha256(randomBytes(8));
    const response = await put(claimed, bytes);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('BLOB_HASH_MISMATCH');
    expect(await readdir(partialDir())).toEqual([]);
    expect((await head(claimed)).headers.get('upload-offset')).toBe('0');
    await expect(readFile(blobPath(claimed))).rejects.toThrow(/ENOENT/);
  });

  it('continues only at the kept offset: another start is 409 with Upload-Offset', async () => {
    const bytes = randomBytes(64 * 1024);
    const sha = sha256(bytes);
    // The first piece only: 202, kept as a partial.
    const first = await put(sha, bytes.subarray(0, 1000), {
      'content-range': `bytes 0-999/${bytes.length}`,
    });
    expect(first.status).toBe(202);
    expect(first.headers.get('upload-offset')).toBe('1000');
    expect(first.body).toEqual({ sha256: sha, size: bytes.length, offset: 1000 });
    expect((await head(sha)).headers.get('upload-offset')).toBe('1000');

    const wrong = await put(sha, bytes.subarray(500), {
      'content-range': `bytes 500-${bytes.length - 1}/${bytes.length}`,
    });
    expect(wrong.status).toBe(409);
    expect(wrong.body.code).toBe('UPLOAD_OFFSET_MISMATCH');
    expect(wrong.headers.get('upload-offset')).toBe('1000');

    const malformed = await put(sha, bytes.subarray(1000), { 'content-range': 'bytes 1000-/*' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.details[0].field).toBe('headers.content-range');

    const rest = await put(sha, bytes.subarray(1000), {
      'content-range': `bytes 1000-${bytes.length - 1}/${bytes.length}`,
    });
    expect(rest.status).toBe(201);
    expect((await readFile(blobPath(sha))).equals(bytes)).toBe(true);
  });

  it(
    'resumes a 20 MB blob cut at half by a destroyed socket, sending ≤ 1.2× its size',
    { timeout: 60_000 },
    async () => {
      const bytes = randomBytes(20 * MB);
      const sha = sha256(bytes);
      const half = 10 * MB;
      let sent = 0;

      // A real socket that sends the headers and half the body, then is destroyed.
      await new Promise<void>((resolve, reject) => {
        const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
        socket.on('error', reject);
        socket.on('connect', async () => {
          const headers =
            `PUT /api/v1/blobs/${sha} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
            `Authorization: ${editor}\r\nContent-Type: application/octet-stream\r\n` +
            `Content-Length: ${bytes.length}\r\n\r\n`;
          const write = (chunk: Buffer | string) =>
            new Promise<void>((done, fail) =>
              socket.write(chunk, (error) => (error ? fail(error) : done())),
            );
          await write(headers);
          for (let offset = 0; offset < half; offset += 256 * 1024) {
            const chunk = bytes.subarray(offset, offset + 256 * 1024);
            await write(chunk);
            sent += chunk.length;
          }
          socket.destroy();
          resolve();
        });
      });

      // What reached the server is kept, fsync'd, as the partial (HEAD waits for the cut
      // upload to be written out); at most what the request stream still buffered can be lost.
      const kept = Number((await head(sha)).headers.get('upload-offset'));
      expect(kept).toBeGreaterThan(half - 256 * 1024);
      expect(kept).toBeLessThanOrEqual(half);
      const partial = await readFile(join(partialDir(), sha));
      expect(partial.equals(bytes.subarray(0, kept))).toBe(true);

      const rest = bytes.subarray(kept);
      const resumed = await put(sha, rest, {
        'content-range': `bytes ${kept}-${bytes.length - 1}/${bytes.length}`,
      });
      sent += rest.length;
      expect(resumed.status).toBe(201);
      expect(resumed.body).toEqual({ sha256: sha, size: bytes.length });
      expect(sent).toBeLessThanOrEqual(1.2 * bytes.length);
      expect(sha256(await readFile(blobPath(sha)))).toBe(sha);
      expect(await readdir(partialDir())).toEqual([]);
    },
  );

  it('a stalled upload of a blob holds up no other upload of it, and leaves no partial behind', async () => {
    const bytes = randomBytes(2 * MB);
    const sha = sha256(bytes);
    // A client that sends half the body, then stalls with the connection open.
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      socket.on('error', reject);
      socket.on('connect', () => {
        socket.write(
          `PUT /api/v1/blobs/${sha} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
            `Authorization: ${editor}\r\nContent-Type: application/octet-stream\r\n` +
            `Content-Length: ${bytes.length}\r\n\r\n`,
        );
        socket.write(bytes.subarray(0, MB), () => resolve());
      });
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      // A range cannot continue a partial still being written: told so at once.
      const range = await put(sha, bytes.subarray(MB), {
        'content-range': `bytes ${MB}-${bytes.length - 1}/${bytes.length}`,
      });
      expect(range.status).toBe(409);
      expect(range.body.code).toBe('UPLOAD_OFFSET_MISMATCH');
      const started = Date.now();
      const whole = await Promise.race([
        put(sha, bytes),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error('the second upload waited for the stalled one')), 5000),
        ),
      ]);
      expect(whole.status).toBe(201);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(sha256(await readFile(blobPath(sha)))).toBe(sha);
    } finally {
      socket.destroy();
    }
    // The stalled upload's partial goes once it ends: the blob is whole already.
    for (let tries = 0; tries < 50 && (await readdir(partialDir())).length > 0; tries++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await readdir(partialDir())).toEqual([]);
    expect((await head(sha)).status).toBe(200);
  });

  it('three concurrent uploads of one blob: it lands once, no partial is kept', async () => {
    const bytes = randomBytes(4 * MB);
    const sha = sha256(bytes);
    const answers = await Promise.all([put(sha, bytes), put(sha, bytes), put(sha, bytes)]);
    for (const answer of answers) expect([200, 201]).toContain(answer.status);
    expect(answers.filter((answer) => answer.status === 201).length).toBeGreaterThanOrEqual(1);
    expect(sha256(await readFile(blobPath(sha)))).toBe(sha);
    expect(await readdir(partialDir())).toEqual([]);
  });

  it('serves referenced blobs with ETag, Range (206), 416 and 304', async () => {
    const created = await server.request('POST', '/api/v1/portfolio', {
      body: portfolioBody(),
    });
    const bytes = fixtures.pdf();
    const upload = await uploadRaw(
      server,
      `/api/v1/portfolio/${created.body.portfolioId}/additionalDocument`,
      bytes,
      { disposition: 'attachment; filename="plan.pdf"' },
    );
    expect(upload.status).toBe(201);
    const sha = sha256(bytes);

    const whole = await get(sha);
    expect(whole.status).toBe(200);
    expect(whole.bytes.equals(bytes)).toBe(true);
    expect(whole.headers.get('etag')).toBe(`"${sha}"`);
    expect(whole.headers.get('content-type')).toBe('application/octet-stream');

    const range = await get(sha, { range: 'bytes=0-9' });
    expect(range.status).toBe(206);
    expect(range.bytes.equals(bytes.subarray(0, 10))).toBe(true);
    expect(range.headers.get('content-range')).toBe(`bytes 0-9/${bytes.length}`);

    const outside = await get(sha, { range: `bytes=${bytes.length + 10}-` });
    expect(outside.status).toBe(416);
    expect(outside.headers.get('content-range')).toBe(`bytes */${bytes.length}`);

    const cached = await get(sha, { 'if-none-match': `"${sha}"` });
    expect(cached.status).toBe(304);
  });

  it('does not serve a blob no kept record refers to: 404', async () => {
    const bytes = randomBytes(4096);
    const sha = sha256(bytes);
    expect((await put(sha, bytes)).status).toBe(201);
    const response = await get(sha);
    expect(response.status).toBe(404);
    expect(JSON.parse(response.bytes.toString()).code).toBe('BLOB_NOT_FOUND');
  });

  it('refuses viewers with 403 before looking at the input', async () => {
    const sha = sha256(Buffer.from('x'));
    const missing = await server.request('POST', '/api/v1/blobs/missing', {
      session: viewer,
      body: { sha256: 'not even an array' },
    });
    expect(missing.status).toBe(403);
    expect((await head('not-a-hash', viewer)).status).toBe(403);
    const response = await fetch(`${server.url}/api/v1/blobs/nothex`, {
      method: 'PUT',
      headers: { authorization: viewer, 'content-type': 'application/octet-stream' },
      body: 'abc',
    });
    expect(response.status).toBe(403);
    expect((await get(sha, {}, viewer)).status).toBe(403);
    // Without a session: 401.
    expect((await head(sha, '')).status).toBe(401);
  });

  it('answers 400 for a malformed hash and 415 for another content type', async () => {
    expect((await head('abc')).status).toBe(400);
    const bytes = Buffer.from('hello');
    const wrongType = await put(sha256(bytes), bytes, { 'content-type': 'image/png' });
    expect(wrongType.status).toBe(415);
    // The words say how a blob is sent (raw bytes), never JSON or multipart.
    for (const type of ['image/png', 'application/json', 'multipart/form-data; boundary=x']) {
      const response = await put(sha256(bytes), bytes, { 'content-type': type });
      expect(response.status).toBe(415);
      expect(response.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
      expect(response.body.message).toMatch(/raw bytes.*application\/octet-stream/);
      expect(response.body.message).not.toMatch(/multipart\/form-data for|as application\/json/);
    }
    expect((await head(sha256(bytes))).status).toBe(404); // nothing was kept
  });

  it('refuses a blob over the file size limit with 413 before reading it', async () => {
    const small = await startTestServer({ limits: { fileBytes: 1024 } });
    try {
      const session = small.adminSession;
      const bytes = randomBytes(4096);
      const path = `/api/v1/blobs/${sha256(bytes)}`;
      const response = await fetch(small.url + path, {
        method: 'PUT',
        headers: { authorization: session, 'content-type': 'application/octet-stream' },
        body: bytes,
      });
      const body = await response.json();
      checkAnswer(small.app, 'PUT', path, response, body);
      expect(response.status).toBe(413);
      expect(await readdir(join(small.dataDir, 'blobs', 'partial'))).toEqual([]);
    } finally {
      await small.close();
    }
  });
});

describe('partial uploads: cleanup', () => {
  it('removes partials untouched for a day, keeps younger ones', async () => {
    const { makeTempDir } = await import('../helpers/test-server');
    const dir = await makeTempDir();
    const partials = await PartialUploads.open(join(dir, 'partial'));
    const { Readable } = await import('node:stream');
    const old = sha256(Buffer.from('old'));
    const young = sha256(Buffer.from('young'));
    for (const sha of [old, young]) {
      await partials.append(sha, Readable.from([Buffer.from('some bytes')]), {
        offset: 0,
        limit: 100,
        tooMuch: () => new Error('too much'),
      });
    }
    const dayAgo = (Date.now() - 25 * 60 * 60 * 1000) / 1000;
    await utimes(partials.pathOf(old), dayAgo, dayAgo);
    expect(await partials.removeOlderThan(24 * 60 * 60 * 1000)).toBe(1);
    expect(await readdir(partials.dir)).toEqual([young]);
  });
});
