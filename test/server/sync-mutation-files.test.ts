import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures } from '../helpers/file-fixtures';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

type Result = {
  status: string;
  revision: number;
  error?: { code: string; message: string; details?: Array<{ field?: string }> };
};

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');

/**
 * A hostile replica (issue 24, point 1): an editor with a device token pushes file records that
 * lie about the bytes they name. The hub computes every file field from the blob itself
 * (DESIGN §5), and its downloads never send more or fewer bytes than they announce.
 */
describe('file records pushed by a replica are computed by the hub', () => {
  let s: TestServer;
  let device: string;
  let n = 0;
  // An HTTP answer of the attacker's, hidden in a blob: sent past a lying Content-Length it
  // would be read by a keep-alive client as the answer to its next request.
  const smuggled = Buffer.from(
    'not an answer\nHTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 32\r\n\r\n' +
      '<script>alert("pwned")</script>\n',
  );

  beforeAll(async () => {
    s = await startTestServer();
    const editor = await s.userSession('hostile-editor', 'editor', ['Interior']);
    const made = await s.request('POST', '/api/v1/devices', {
      session: editor,
      body: { name: 'Laptop', replicaId: 'hostile-1' },
    });
    device = `Bearer ${made.body.token}`;
  });
  afterAll(() => s.close());

  async function putBlob(bytes: Buffer): Promise<string> {
    const sha = sha256(bytes);
    const response = await fetch(`${s.url}/api/v1/blobs/${sha}`, {
      method: 'PUT',
      headers: { authorization: device, 'content-type': 'application/octet-stream' },
      body: new Uint8Array(bytes),
    });
    expect(response.status, await response.text()).toBeLessThan(300);
    return sha;
  }

  async function push(mutation: Record<string, unknown>): Promise<Result> {
    const answer = await s.request<{ results: Result[] }>('POST', '/api/v1/sync/mutations', {
      session: device,
      body: { replicaId: 'hostile-1', mutations: [{ mutationId: `h-${++n}`, ...mutation }] },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.results[0]!;
  }

  /** A file object as a lying replica sends it: every metadata field made up. */
  function lyingFile(sha: string, extra: Record<string, unknown> = {}) {
    return {
      fileId: `f${n + 1}x${Math.random().toString(36).slice(2, 8)}`,
      sha256: sha,
      originalFilename: 'note.txt',
      description: 'made up',
      fullFileExtension: 'png',
      mimeType: 'image/png',
      size: 10,
      md5Checksum: 'd41d8cd98f00b204e9800998ecf8427e\r\nX-Injected: yes',
      createdTime: 0,
      modifiedTime: 0,
      dimention: { width: 1, height: 1 },
      ...extra,
    };
  }

  it('stores size, type, md5 and extension read from the blob, not what the replica claims', async () => {
    const sha = await putBlob(smuggled);
    const result = await push({
      portfolioId: 'hostile-a',
      op: 'create',
      fields: { ...portfolioBody(), additionalDocument: [lyingFile(sha)] },
    });
    expect(result.status, JSON.stringify(result)).toBe('applied');
    const detail = (await s.request('GET', '/api/v1/portfolio/hostile-a')).body;
    const [file] = detail.additionalDocument;
    expect(file).toMatchObject({
      originalFilename: 'note.txt',
      description: 'made up',
      mimeType: 'text/plain',
      fullFileExtension: 'txt',
      size: smuggled.length,
      md5Checksum: md5(smuggled),
      dimention: null,
    });
    expect(file.createdTime).toBeGreaterThan(1_000_000_000_000);
  });

  it('a viewer on one keep-alive connection gets exactly one answer per request', async () => {
    const viewer = await s.userSession('kept-alive-viewer', 'viewer');
    await s.request('PUT', '/api/v1/portfolio/hostile-a', {
      body: { ...portfolioBody(), command: 'publish' },
    });
    const fileId = (await s.request('GET', '/api/v1/portfolio/hostile-a')).body
      .additionalDocument[0].fileID;
    const path = `/api/v1/portfolio/hostile-a/files/${fileId}`;
    const answers = await keepAliveExchange(s.url, [path, path], viewer);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    for (const answer of answers) {
      expect(answer.contentLength).toBe(smuggled.length);
      expect(answer.body.equals(smuggled)).toBe(true);
    }
    expect(answers.leftover).toBe(''); // no third answer waiting on the socket
  });

  it("a record that lies about its size (kept from before) is still served by the blob's own length", async () => {
    const viewer = await s.userSession('kept-alive-viewer-2', 'viewer');
    const current = await s.app.portfolios.get('hostile-a');
    const [file] = current!.additionalDocument;
    // Planted below the service, as a record stored before the hub computed file fields.
    const { seq: _seq, createdBy: _c, modifiedBy: _m, ...record } = current!;
    await s.app.portfolios.update(
      'hostile-a',
      current!.revision,
      {
        ...record,
        additionalDocument: [{ ...file!, size: 10 }],
        revision: current!.revision + 1,
      },
      { by: 'test', time: Date.now(), command: 'save', changedFields: ['additionalDocument'] },
    );
    const path = `/api/v1/portfolio/hostile-a/files/${file!.fileId}`;
    const answers = await keepAliveExchange(s.url, [path, path], viewer);
    expect(answers.map((answer) => answer.contentLength)).toEqual([
      smuggled.length,
      smuggled.length,
    ]);
    expect(answers.leftover).toBe('');
    const detail = await s.request('GET', '/api/v1/portfolio/hostile-a', { session: viewer });
    expect(detail.status).toBe(200);
    expect(Buffer.from(detail.body.additionalDocument[0].data, 'base64').equals(smuggled)).toBe(
      true,
    );
  });

  it('refuses a PDF as the cover, as an upload would', async () => {
    const sha = await putBlob(fixtures.pdf());
    const result = await push({
      portfolioId: 'hostile-b',
      op: 'create',
      fields: { ...portfolioBody(), cover: lyingFile(sha, { originalFilename: 'cover.png' }) },
    });
    expect(result.status).toBe('rejected');
    expect(result.error?.code).toBe('UNSUPPORTED_FILE_TYPE');
    expect((await s.request('GET', '/api/v1/portfolio/hostile-b')).status).toBe(404);
  });

  it('refuses more files in a list than its limit (25 of 20), changing nothing', async () => {
    const sha = await putBlob(await fixtures.jpeg());
    const files = Array.from({ length: 25 }, (_, i) =>
      lyingFile(sha, { fileId: `many-${i}`, originalFilename: `p${i}.jpg` }),
    );
    const result = await push({
      portfolioId: 'hostile-c',
      op: 'create',
      fields: { ...portfolioBody(), draftingProcess: files },
    });
    expect(result.status).toBe('rejected');
    expect(result.error?.code).toBe('TOO_MANY_FILES');
    expect((await s.request('GET', '/api/v1/portfolio/hostile-c')).status).toBe(404);
  });

  it('cleans a file name as an upload does (path and bidi tricks)', async () => {
    const sha = await putBlob(await fixtures.png());
    const result = await push({
      portfolioId: 'hostile-d',
      op: 'create',
      fields: {
        ...portfolioBody(),
        cover: lyingFile(sha, { originalFilename: '../../../evil\u202egnp.exe' }),
      },
    });
    expect(result.status).toBe('applied');
    const cover = (
      await s.request(
        'GET',
        '/api/v1/portfolio/hostile-d?field=cover.originalFilename,cover.mimeType',
      )
    ).body.cover;
    expect(cover).toEqual({ originalFilename: 'evilgnp.exe', mimeType: 'image/png' });
  });

  it('a malformed sha256 or file id refuses that mutation in words, not the batch with a 500', async () => {
    const badSha = await push({
      portfolioId: 'hostile-e',
      op: 'create',
      fields: { ...portfolioBody(), cover: lyingFile('NOT-A-HASH') },
    });
    expect(badSha.status).toBe('rejected');
    expect(badSha.error?.code).toBe('VALIDATION_FAILED');
    const sha = await putBlob(await fixtures.png());
    const badId = await push({
      portfolioId: 'hostile-e',
      op: 'create',
      fields: { ...portfolioBody(), cover: lyingFile(sha, { fileId: 'a\r\nb' }) },
    });
    expect(badId.status).toBe('rejected');
    expect(badId.error?.code).toBe('VALIDATION_FAILED');
  });

  it('a blob the hub lacks is refused as missing; an unknown key of a file is refused', async () => {
    const missing = await push({
      portfolioId: 'hostile-f',
      op: 'create',
      fields: { ...portfolioBody(), cover: lyingFile('0'.repeat(64)) },
    });
    expect(missing.error?.code).toBe('BLOBS_MISSING');
    const sha = await putBlob(await fixtures.png());
    const unknown = await push({
      portfolioId: 'hostile-f',
      op: 'create',
      fields: { ...portfolioBody(), cover: lyingFile(sha, { data: 'AAAA' }) },
    });
    expect(unknown.error?.code).toBe('VALIDATION_FAILED');
  });

  it('an update keeps a file it already holds as it is when the replica sends it back unchanged', async () => {
    const sha = await putBlob(await fixtures.jpeg());
    const cover = lyingFile(sha, { fileId: 'kept-cover', originalFilename: 'kept.jpg' });
    await push({ portfolioId: 'hostile-g', op: 'create', fields: { ...portfolioBody(), cover } });
    const before = (await s.request('GET', '/api/v1/portfolio/hostile-g')).body;
    const same = await push({
      portfolioId: 'hostile-g',
      op: 'update',
      baseRevision: before.revision,
      fields: { cover: { ...cover, createdTime: 5, size: 1 } },
    });
    expect(same.revision).toBe(before.revision); // nothing changed: no revision for nothing
    const described = await push({
      portfolioId: 'hostile-g',
      op: 'update',
      baseRevision: before.revision,
      fields: { cover: { ...cover, description: 'the lake at dawn' } },
    });
    expect(described.status).toBe('applied');
    const after = (await s.request('GET', '/api/v1/portfolio/hostile-g')).body.cover;
    expect(after).toMatchObject({
      fileId: 'kept-cover',
      description: 'the lake at dawn',
      createdTime: before.cover.createdTime,
      md5Checksum: before.cover.md5Checksum,
    });
  });
});

interface RawAnswer {
  status: number;
  contentLength: number;
  body: Buffer;
}

/**
 * GETs each path in turn on one keep-alive connection and reads each answer by its
 * Content-Length, as a browser does; whatever is left on the socket afterwards is `leftover`.
 */
async function keepAliveExchange(
  base: string,
  paths: string[],
  session: string,
): Promise<RawAnswer[] & { leftover: string }> {
  const { hostname, port } = new URL(base);
  const socket: Socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let buffered = Buffer.alloc(0);
  const waiters: Array<() => void> = [];
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    waiters.splice(0).forEach((wake) => wake());
  });
  const more = () =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the answer did not come')), 5000);
      waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  const answers = [] as unknown as RawAnswer[] & { leftover: string };
  try {
    for (const path of paths) {
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: ${session}\r\n` +
          'Connection: keep-alive\r\n\r\n',
      );
      let end: number;
      while ((end = buffered.indexOf('\r\n\r\n')) < 0) await more();
      const head = buffered.subarray(0, end).toString('latin1');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
      const contentLength = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? -1);
      while (buffered.length < end + 4 + contentLength) await more();
      answers.push({
        status,
        contentLength,
        body: Buffer.from(buffered.subarray(end + 4, end + 4 + contentLength)),
      });
      buffered = buffered.subarray(end + 4 + contentLength);
    }
    // Anything more the server wrote would arrive with the last answer's bytes.
    await new Promise((resolve) => setTimeout(resolve, 100));
    answers.leftover = buffered.toString('latin1');
    return answers;
  } finally {
    socket.destroy();
  }
}
