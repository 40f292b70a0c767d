import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/error-body';
import { fixtures } from '../helpers/file-fixtures';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

interface RawAnswer {
  status: number;
  headers: string;
  body: any;
}

/** Sends raw request bytes (all at once, or `trickle` bytes at a time) and reads the answer
 *  until the server closes the connection. */
function rawExchange(
  url: string,
  head: string,
  options: { trickle?: { bytes: number; everyMs: number; total: number } } = {},
): Promise<RawAnswer & { sent: number }> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(Number(port), '127.0.0.1');
    let received = '';
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', () => {}); // a reset after the answer is expected
    socket.on('close', () => {
      clearInterval(timer);
      const [headers = '', body = ''] = received.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1] ?? 0);
      let parsed: unknown = body;
      try {
        parsed = JSON.parse(body);
      } catch {
        // not JSON
      }
      resolve({ status, headers, body: parsed, sent });
    });
    socket.on('connect', () => {
      socket.write(head);
      const trickle = options.trickle;
      if (!trickle) return;
      timer = setInterval(() => {
        if (sent >= trickle.total || socket.destroyed) return clearInterval(timer);
        socket.write('x'.repeat(trickle.bytes));
        sent += trickle.bytes;
      }, trickle.everyMs);
    });
    socket.setTimeout(30_000, () => reject(new Error('no answer within 30 s')));
  });
}

const asResponse = (answer: RawAnswer) => ({
  status: answer.status,
  body: answer.body,
  headers: new Headers({
    'content-type': /content-type: ([^\r\n]+)/i.exec(answer.headers)?.[1] ?? '',
  }),
});

describe('request timeouts', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ timeouts: { requestMs: 1500, headersMs: 1000 } });
  });
  afterAll(() => server.close());

  it('cuts a socket trickling a declared body with 408, in the one error shape', async () => {
    const declared = 10_000;
    const answer = await rawExchange(
      server.url,
      'POST /api/v1/portfolio HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
        `Authorization: ${server.adminSession}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${declared}\r\n\r\n`,
      { trickle: { bytes: 10, everyMs: 100, total: declared } },
    );
    expectError(asResponse(answer), 408, 'REQUEST_TIMEOUT');
    // Cut long before the body was complete: 10 bytes every 100 ms would take 100 s.
    expect(answer.sent).toBeLessThan(declared);
  });

  it('cuts a socket trickling its headers with 408', async () => {
    const answer = await rawExchange(server.url, 'GET /api/v1/appauth HTTP/1.1\r\nX-Slow: ', {
      trickle: { bytes: 1, everyMs: 100, total: 100_000 },
    });
    expectError(asResponse(answer), 408, 'REQUEST_TIMEOUT');
  });

  it('still answers a request that arrives in time', async () => {
    const created = await server.request('POST', '/api/v1/portfolio', { body: portfolioBody() });
    expect(created.status).toBe(201);
  });
});

describe('strict Host while bound to loopback', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ loopbackOnly: true });
  });
  afterAll(() => server.close());

  const get = (hostLines: string) =>
    rawExchange(
      server.url,
      `GET /api/v1/appauth HTTP/1.1\r\n${hostLines}Authorization: ${server.adminSession}\r\n` +
        'Connection: close\r\n\r\n',
    );

  it.each([
    ['userinfo before a foreign name', (port: string) => `127.0.0.1:${port}@evil.example`],
    ['a name after an IPv6 literal', () => '[::1].evil.example'],
    ['a port that is not a number', () => '127.0.0.1:80x'],
    ['a space inside', () => 'localhost evil.example'],
  ])('refuses %s', async (_case, host) => {
    const answer = await get(`Host: ${host(new URL(server.url).port)}\r\n`);
    expectError(asResponse(answer), 403, 'HOST_NOT_ALLOWED');
  });

  it('refuses two Host headers, even both loopback', async () => {
    const port = new URL(server.url).port;
    const answer = await get(`Host: 127.0.0.1:${port}\r\nHost: evil.example\r\n`);
    expectError(asResponse(answer), 403, 'HOST_NOT_ALLOWED');
    const same = await get(`Host: localhost:${port}\r\nHost: localhost:${port}\r\n`);
    expectError(asResponse(same), 403, 'HOST_NOT_ALLOWED');
  });

  it.each([
    (port: string) => `localhost:${port}`,
    () => '127.0.0.1',
    (port: string) => `[::1]:${port}`,
    (port: string) => `LOCALHOST:${port}`,
  ])('answers a valid loopback Host (%#)', async (host) => {
    const answer = await get(`Host: ${host(new URL(server.url).port)}\r\n`);
    expect(answer.status).toBe(200);
  });
});

describe('integers in query strings', () => {
  let server: TestServer;
  let fileUrl: string;
  beforeAll(async () => {
    server = await startTestServer();
    const created = await server.request('POST', '/api/v1/portfolio', { body: portfolioBody() });
    const id = created.body.portfolioId;
    const uploaded = await server.request('PUT', `/api/v1/portfolio/${id}/cover`, {
      body: { originalFilename: 'a.jpg', data: (await fixtures.jpeg()).toString('base64') },
    });
    fileUrl = `/api/v1/portfolio/${id}/files/${uploaded.body.fileId}/thumbnail`;
  });
  afterAll(() => server.close());

  const spellings = ['0x10', '1e3', '2.56e2', '%2012', '+5', '12%20', '010', '-1', '', '1.0'];

  it.each(spellings)('refuses pageSize=%s with 400 naming the parameter', async (value) => {
    const response = await server.request('GET', `/api/v1/portfolio?pageSize=${value}`);
    const body = expectError(response, 400, 'VALIDATION_FAILED');
    expect(body.details.map((detail) => detail.field)).toContain('querystring.pageSize');
  });

  it.each(spellings)('refuses width=%s with 400', async (value) => {
    const response = await server.request('GET', `${fileUrl}?width=${value}`);
    const body = expectError(response, 400, 'VALIDATION_FAILED');
    expect(body.details.map((detail) => detail.field)).toContain('querystring.width');
  });

  it('accepts plain decimal integers', async () => {
    expect((await server.request('GET', '/api/v1/portfolio?pageSize=7')).status).toBe(200);
    expect((await server.request('GET', '/api/v1/portfolio?pageSize=1000')).status).toBe(200);
    expect((await server.request('GET', `${fileUrl}?width=128`)).status).toBe(200);
    expect((await server.request('GET', fileUrl)).status).toBe(200);
  });
});

describe('a client aborting an upload', () => {
  let server: TestServer;
  let path: string;
  const lines: Array<Record<string, any>> = [];
  beforeAll(async () => {
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean))
          lines.push(JSON.parse(line));
        done();
      },
    });
    server = await startTestServer({ logger: { level: 'info', stream } });
    const created = await server.request('POST', '/api/v1/portfolio', { body: portfolioBody() });
    path = `/api/v1/portfolio/${created.body.portfolioId}/draftingProcess`;
  });
  afterAll(() => server.close());

  /** Sends the head of an upload declaring 5 MB, part of its body, then closes the socket. */
  async function abortUpload(contentType: string, bodyStart: string) {
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    socket.on('error', () => {});
    await new Promise((resolve) => socket.on('connect', resolve));
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${server.adminSession}\r\n` +
        `Content-Type: ${contentType}\r\nContent-Length: 5000000\r\n\r\n${bodyStart}` +
        'x'.repeat(200_000),
    );
    await sleep(300);
    socket.destroy();
  }

  const aborted = () => lines.filter((line) => /abort/i.test(line.msg ?? ''));

  it.each([
    [
      'multipart',
      'multipart/form-data; boundary=xxBOUNDARYxx',
      '--xxBOUNDARYxx\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n' +
        'Content-Type: application/pdf\r\n\r\n%PDF-1.4\n',
    ],
    ['JSON', 'application/json', '{"originalFilename":"a.pdf","data":"'],
  ])('is logged as one info line without a stack (%s)', async (_kind, contentType, bodyStart) => {
    lines.length = 0;
    await abortUpload(contentType, bodyStart);
    await expect.poll(() => aborted().length).toBe(1);
    await sleep(300); // anything logged late would be a second line
    expect(aborted()).toHaveLength(1);
    expect(aborted()[0]!.level).toBe(30); // info
    expect(aborted()[0]!.err).toBeUndefined();
    expect(lines.filter((line) => line.level >= 40)).toEqual([]);
  });
});
