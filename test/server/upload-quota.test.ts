import { createHash, randomBytes } from 'node:crypto';
import { readdir, utimes } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  checkAnswer,
  portfolioBody,
  startTestServer,
  type TestServer,
} from '../helpers/test-server';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const KB = 1024;
const MB = 1024 * 1024;
/** `n` bytes of fresh plain text: a file a portfolio may hold, unlike random bytes. */
const bytesOf = (n: number) => Buffer.from(randomBytes(n / 2).toString('hex'));

/**
 * Issue 24, point 4: what blob uploads may keep before a change uses it (partial uploads, and
 * whole blobs nothing refers to yet) is bounded per user (413) and for everyone (507), in the one
 * error shape and the OpenAPI document; idle partials are swept within the hour.
 */
describe('upload quota for blobs waiting to be used', () => {
  let server: TestServer;
  const sessions: Record<string, string> = {};

  beforeAll(async () => {
    server = await startTestServer({
      uploads: { userBytes: 1 * MB, userPartials: 3, totalBytes: 2 * MB },
    });
    for (const name of ['quota-ann', 'quota-bob', 'quota-cy']) {
      sessions[name] = await server.userSession(name, 'editor', ['Interior']);
    }
  });
  afterAll(() => server.close());
  // Each test starts with nothing waiting: what the last one left is used or dropped.
  afterEach(async () => {
    await server.app.blobStore.idle();
  });

  /** A PUT of raw bytes (or of a piece of them) over real HTTP, checked against the document. */
  async function put(user: string, bytes: Buffer, range?: { start: number; end: number }) {
    const sha = sha256(bytes);
    const path = `/api/v1/blobs/${sha}`;
    const body = range ? bytes.subarray(range.start, range.end + 1) : bytes;
    const response = await fetch(server.url + path, {
      method: 'PUT',
      headers: {
        authorization: sessions[user]!,
        'content-type': 'application/octet-stream',
        ...(range && { 'content-range': `bytes ${range.start}-${range.end}/${bytes.length}` }),
      },
      body: new Uint8Array(body),
    });
    const text = await response.text();
    const parsed = text ? JSON.parse(text) : text;
    checkAnswer(server.app, 'PUT', path, response, parsed);
    return { status: response.status, body: parsed, sha };
  }

  /** Makes the blobs used by a portfolio (a replica's change referring to them). */
  async function use(user: string, shas: string[]) {
    const device = await server.request('POST', '/api/v1/devices', {
      session: sessions[user]!,
      body: { name: 'Laptop', replicaId: `replica-${user}-${shas[0]!.slice(0, 8)}` },
    });
    const files = shas.map((sha, index) => ({
      fileId: `f${index}${sha.slice(0, 8)}`,
      sha256: sha,
      originalFilename: `notes-${index}.txt`,
      description: '',
    }));
    const pushed = await server.request('POST', '/api/v1/sync/mutations', {
      session: `Bearer ${device.body.token}`,
      body: {
        replicaId: `replica-${user}-${shas[0]!.slice(0, 8)}`,
        mutations: [
          {
            mutationId: `use-${shas[0]}`,
            portfolioId: `p${shas[0]!.slice(0, 12)}`,
            op: 'create',
            fields: { ...portfolioBody(), additionalDocument: files },
          },
        ],
      },
    });
    expect(pushed.body.results[0].status, JSON.stringify(pushed.body)).toBe('applied');
  }

  it("refuses a user's upload beyond their bytes with 413, in plain words", async () => {
    const first = await put('quota-ann', bytesOf(600 * KB));
    expect(first.status).toBe(201);
    const second = await put('quota-ann', bytesOf(600 * KB));
    expect(second.status).toBe(413);
    expect(second.body).toMatchObject({
      result: 'error',
      statusCode: 413,
      code: 'UPLOAD_QUOTA_EXCEEDED',
    });
    expect(second.body.message).toContain('1 MB');
    expect(second.body.message).not.toMatch(/[\\^$[\]]|sha|blob/i);
    // Another user is not held to Ann's uploads.
    expect((await put('quota-bob', bytesOf(300 * KB))).status).toBe(201);
    // Once a change uses Ann's blob, it no longer counts.
    await use('quota-ann', [first.sha]);
    expect((await put('quota-ann', bytesOf(600 * KB))).status).toBe(201);
  });

  it('counts what a partial keeps, and checks its whole size when it goes on', async () => {
    const bytes = bytesOf(900 * KB);
    const started = await put('quota-cy', bytes, { start: 0, end: 100 * KB - 1 });
    expect(started.status).toBe(202);
    const other = await put('quota-cy', bytesOf(200 * KB));
    expect(other.status).toBe(201);
    // Whole, the partial would bring Cy to 1.1 MB: refused, and what it kept stays.
    const rest = { start: 100 * KB, end: bytes.length - 1 };
    const refused = await put('quota-cy', bytes, rest);
    expect(refused.status).toBe(413);
    expect(refused.body.code).toBe('UPLOAD_QUOTA_EXCEEDED');
    // Once the other blob is used, it fits (its own 100 KB are not counted twice).
    await use('quota-cy', [other.sha]);
    const done = await put('quota-cy', bytes, rest);
    expect(done.status).toBe(201);
    await use('quota-cy', [done.sha]);
  });

  it('refuses everyone beyond the total with 507', async () => {
    // Ann holds 600 KB, Bob 300 KB; Cy and Bob fill up to the 2 MB of everyone.
    expect((await put('quota-cy', bytesOf(700 * KB))).status).toBe(201);
    expect((await put('quota-bob', bytesOf(300 * KB))).status).toBe(201);
    const refused = await put('quota-bob', bytesOf(300 * KB));
    expect(refused.status).toBe(507);
    expect(refused.body).toMatchObject({
      result: 'error',
      statusCode: 507,
      code: 'UPLOAD_SPACE_FULL',
    });
    expect(refused.body.message).toContain('2 MB');
  });

  it('bounds how many unfinished uploads one user keeps', async () => {
    const partial = () => put('quota-ann', bytesOf(20 * KB), { start: 0, end: 999 });
    // Ann's 600 KB blob from before is waiting, whole: it is not unfinished.
    for (let i = 0; i < 3; i++) expect((await partial()).status).toBe(202);
    const fourth = await partial();
    expect(fourth.status).toBe(413);
    expect(fourth.body.code).toBe('UPLOAD_QUOTA_EXCEEDED');
    expect(fourth.body.message).toContain('3 unfinished uploads');
  });
});

describe('idle partial uploads are swept within the hour', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ uploads: { partialIdleMs: 60 * 60 * 1000 } });
  });
  afterAll(() => server.close());

  it('removes a partial idle for an hour on the next pass, and its quota with it', async () => {
    const editor = await server.userSession('sweep-editor', 'editor');
    const bytes = bytesOf(64 * KB);
    const sha = sha256(bytes);
    const response = await fetch(`${server.url}/api/v1/blobs/${sha}`, {
      method: 'PUT',
      headers: {
        authorization: editor,
        'content-type': 'application/octet-stream',
        'content-range': `bytes 0-999/${bytes.length}`,
      },
      body: new Uint8Array(bytes.subarray(0, 1000)),
    });
    expect(response.status).toBe(202);
    const partialDir = join(server.dataDir, 'blobs', 'partial');
    const uploaders = join(server.dataDir, 'blobs', 'uploaders');
    expect(await readdir(partialDir)).toEqual([sha]);
    // An hour and a minute idle (a day was the bound before).
    const idle = (Date.now() - 61 * 60 * 1000) / 1000;
    await utimes(join(partialDir, sha), idle, idle);
    const [userDir] = await readdir(uploaders);
    await utimes(join(uploaders, userDir!, sha), idle, idle);
    // The pass that runs at start (and then every ten minutes), run now.
    await server.stop();
    const again = await startTestServer({
      dataDir: server.dataDir,
      uploads: { partialIdleMs: 60 * 60 * 1000 },
    });
    try {
      expect(await readdir(partialDir)).toEqual([]);
      expect(await readdir(join(uploaders, userDir!))).toEqual([]);
    } finally {
      await again.stop();
    }
  });
});

describe('uploads started together', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ uploads: { userBytes: 1 * MB } });
  });
  afterAll(() => server.close());

  it('cannot all pass the quota: each is counted from its admission on', async () => {
    const editor = await server.userSession('parallel-editor', 'editor');
    const { port } = new URL(server.url);
    // Five uploads whose bodies come slowly: all are admitted (or not) before any is on disk.
    const answers = await Promise.all(
      Array.from(
        { length: 5 },
        () =>
          new Promise<number>((resolve, reject) => {
            const bytes = bytesOf(400 * KB);
            const request = httpRequest({
              host: '127.0.0.1',
              port,
              method: 'PUT',
              path: `/api/v1/blobs/${sha256(bytes)}`,
              headers: {
                authorization: editor,
                'content-type': 'application/octet-stream',
                'content-length': String(bytes.length),
              },
            });
            request.on('response', (response) => {
              response.resume();
              resolve(response.statusCode!);
            });
            request.on('error', reject);
            request.write(bytes.subarray(0, KB));
            setTimeout(() => request.end(bytes.subarray(KB)), 500);
          }),
      ),
    );
    expect(answers.filter((status) => status === 201)).toHaveLength(2);
    expect(answers.filter((status) => status === 413)).toHaveLength(3);
  });
});
