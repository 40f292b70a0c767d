import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures } from '../helpers/file-fixtures';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

const MB = 1024 * 1024;

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One keep-alive connection driven by hand, as a browser's would be: requests are written to it
 * and answers read from it in turn, so a test sees what happens to the connection after a
 * refusal (closed by the server, or still good for the next request).
 */
class RawConnection {
  private buffer = Buffer.alloc(0);
  private waiting: (() => void) | undefined;
  closed = false;
  readonly whenClosed: Promise<void>;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.waiting?.();
    });
    socket.on('error', () => {}); // a reset after the server closed: seen as `closed`
    this.whenClosed = new Promise((resolve) =>
      socket.once('close', () => {
        this.closed = true;
        this.waiting?.();
        resolve();
      }),
    );
  }

  static open(url: string): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(Number(new URL(url).port), '127.0.0.1');
      socket.once('error', reject);
      socket.once('connect', () => resolve(new RawConnection(socket)));
    });
  }

  write(data: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) =>
      this.socket.write(data, (error) => (error ? reject(error) : resolve())),
    );
  }

  /** Reads one answer (with a Content-Length body) off the connection. */
  async answer(): Promise<RawAnswer> {
    for (;;) {
      const parsed = this.parse();
      if (parsed) return parsed;
      if (this.closed) throw new Error('the connection closed before an answer');
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }

  private parse(): RawAnswer | undefined {
    const end = this.buffer.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const [statusLine, ...lines] = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (this.buffer.length < end + 4 + length) return undefined;
    const body = this.buffer.subarray(end + 4, end + 4 + length).toString();
    this.buffer = this.buffer.subarray(end + 4 + length);
    return { status: Number(statusLine!.split(' ')[1]), headers, body };
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** A multipart body holding one file, and the boundary it uses. */
function multipart(filename: string, bytes: Buffer) {
  const boundary = 'early-refusal-boundary';
  const head =
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n` +
    'Content-Type: application/octet-stream\r\n\r\n';
  return {
    type: `multipart/form-data; boundary=${boundary}`,
    body: Buffer.concat([Buffer.from(head), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]),
  };
}

/**
 * Issue 24, point 7: an upload refused before its body was read must not leave its connection
 * waiting for the rest of that body (the browser's next request on it stalled until the
 * keep-alive timeout). Such a refusal says `Connection: close` and the server closes the
 * connection; a refusal after the whole body arrived keeps it for the next request.
 */
describe('early refusals close their connection', () => {
  let server: TestServer;
  let portfolioId: string;
  const connections: RawConnection[] = [];

  beforeAll(async () => {
    server = await startTestServer();
    const created = await server.request('POST', '/api/v1/portfolio', { body: portfolioBody() });
    portfolioId = created.body.portfolioId;
  });
  afterAll(async () => {
    for (const connection of connections) connection.destroy();
    await server.close();
  });

  async function open() {
    const connection = await RawConnection.open(server.url);
    connections.push(connection);
    return connection;
  }

  const requestHead = (method: string, path: string, headers: Record<string, string>) =>
    `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${server.adminSession}\r\n` +
    Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('') +
    '\r\n';

  /** The refusal closes the connection, and a request on a new one is answered at once. */
  async function expectClosedAfter(answer: RawAnswer, connection: RawConnection) {
    expect(answer.headers.connection).toBe('close');
    await connection.whenClosed;
    const next = await open();
    await next.write(requestHead('GET', `/api/v1/portfolio/${portfolioId}`, {}));
    expect((await next.answer()).status).toBe(200);
  }

  it('a multipart pixel bomb refused from its header, its body still arriving', async () => {
    const { type, body } = multipart('bomb.png', fixtures.pixelBomb());
    const connection = await open();
    await connection.write(
      requestHead('POST', `/api/v1/portfolio/${portfolioId}/draftingProcess`, {
        'Content-Type': type,
        'Content-Length': String(body.length + 2 * MB),
      }),
    );
    // The image's header, then some of its announced bytes; the rest never comes.
    await connection.write(body.subarray(0, body.length - 40));
    await connection.write(Buffer.alloc(300 * 1024));
    const answer = await connection.answer();
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).code).toBe('IMAGE_TOO_LARGE');
    await expectClosedAfter(answer, connection);
  });

  it('a multipart pixel bomb sent whole, then the next request on that connection', async () => {
    const { type, body } = multipart(
      'bomb.png',
      Buffer.concat([fixtures.pixelBomb(), Buffer.alloc(2 * MB)]),
    );
    const connection = await open();
    await connection.write(
      requestHead('POST', `/api/v1/portfolio/${portfolioId}/draftingProcess`, {
        'Content-Type': type,
        'Content-Length': String(body.length),
      }),
    );
    void connection.write(body).catch(() => {});
    const answer = await connection.answer();
    expect(answer.status).toBe(413);
    // As a browser does once its request is sent: the next one on the same connection.
    void connection
      .write(requestHead('GET', `/api/v1/portfolio/${portfolioId}`, {}))
      .catch(() => {});
    const next = await Promise.race([
      connection.answer().then(
        (second) => second.status,
        () => 'closed',
      ),
      connection.whenClosed.then(() => 'closed'),
      new Promise((resolve) => setTimeout(() => resolve('stalled'), 1000)),
    ]);
    expect(['closed', 200]).toContain(next);
  });

  it('a multipart upload too large by its Content-Length, before a byte of it is read', async () => {
    const connection = await open();
    // A list's upload may carry a whole list of files (20 of at most 50 MB each, DESIGN §16).
    await connection.write(
      requestHead('POST', `/api/v1/portfolio/${portfolioId}/draftingProcess`, {
        'Content-Type': 'multipart/form-data; boundary=x',
        'Content-Length': String(1100 * MB),
      }),
    );
    const answer = await connection.answer();
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).code).toBe('PAYLOAD_TOO_LARGE');
    await expectClosedAfter(answer, connection);
  });

  it('a raw upload too large by its Content-Length', async () => {
    const connection = await open();
    await connection.write(
      requestHead('PUT', `/api/v1/portfolio/${portfolioId}/cover`, {
        'Content-Type': 'image/png',
        'Content-Disposition': 'attachment; filename="big.png"',
        'Content-Length': String(60 * MB),
      }),
    );
    const answer = await connection.answer();
    expect(answer.status).toBe(413);
    await expectClosedAfter(answer, connection);
  });

  it('a blob upload too large by its Content-Length', async () => {
    const connection = await open();
    await connection.write(
      requestHead('PUT', `/api/v1/blobs/${'a'.repeat(64)}`, {
        'Content-Type': 'application/octet-stream',
        'Content-Length': String(60 * MB),
      }),
    );
    const answer = await connection.answer();
    expect(answer.status).toBe(413);
    await expectClosedAfter(answer, connection);
  });

  it('a blob the server has already, its body not read', async () => {
    const bytes = Buffer.from('a blob the hub has already');
    const sha = createHash('sha256').update(bytes).digest('hex');
    const put = (body: Buffer) =>
      fetch(`${server.url}/api/v1/blobs/${sha}`, {
        method: 'PUT',
        headers: { authorization: server.adminSession, 'content-type': 'application/octet-stream' },
        body: new Uint8Array(body),
      });
    expect((await put(bytes)).status).toBe(201);
    const connection = await open();
    await connection.write(
      requestHead('PUT', `/api/v1/blobs/${sha}`, {
        'Content-Type': 'application/octet-stream',
        'Content-Length': String(bytes.length),
      }),
    );
    const answer = await connection.answer();
    expect(answer.status).toBe(200);
    await expectClosedAfter(answer, connection);
  });

  it('an upload without a session, its body not read', async () => {
    const connection = await open();
    await connection.write(
      `POST /api/v1/portfolio/${portfolioId}/draftingProcess HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
        `Content-Type: image/png\r\nContent-Length: ${10 * MB}\r\n\r\n`,
    );
    const answer = await connection.answer();
    expect(answer.status).toBe(401);
    await expectClosedAfter(answer, connection);
  });

  it('keeps the connection when the refused body had arrived whole', async () => {
    const connection = await open();
    const bytes = fixtures.pixelBomb();
    await connection.write(
      Buffer.concat([
        Buffer.from(
          requestHead('POST', `/api/v1/portfolio/${portfolioId}/draftingProcess`, {
            'Content-Type': 'image/png',
            'Content-Disposition': 'attachment; filename="bomb.png"',
            'Content-Length': String(bytes.length),
          }),
        ),
        bytes,
      ]),
    );
    const refused = await connection.answer();
    expect(refused.status).toBe(413);
    expect(refused.headers.connection).not.toBe('close');
    // The next request on the same connection is answered.
    await connection.write(requestHead('GET', `/api/v1/portfolio/${portfolioId}`, {}));
    expect((await connection.answer()).status).toBe(200);
    expect(connection.closed).toBe(false);
  });
});
