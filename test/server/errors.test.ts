import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/error-body';
import {
  embeddedStore,
  portfolioBody,
  startTestServer,
  type ApiResponse,
  type TestServer,
  embeddedOnly,
} from '../helpers/test-server';

/** A raw HTTP/1.1 request, for headers fetch will not send as given (Host). */
function rawRequest(
  url: string,
  path: string,
  headers: Record<string, string>,
): Promise<ApiResponse> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = httpRequest(
      { host: target.hostname, port: target.port, path, method: 'GET', headers },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          const responseHeaders = new Headers();
          for (const [key, value] of Object.entries(res.headers))
            if (typeof value === 'string') responseHeaders.set(key, value);
          resolve({
            status: res.statusCode ?? 0,
            body:
              text && (res.headers['content-type'] ?? '').includes('json')
                ? JSON.parse(text)
                : text,
            headers: responseHeaders,
          });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('error answers', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ limits: { bodyBytes: 4096 } });
  });
  afterAll(() => s.close());

  it('answers unknown routes with 404 ROUTE_NOT_FOUND in the one shape', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/nope'],
      ['GET', '/api/v2/portfolio'],
      ['POST', '/api/v1/nope'],
      ['PUT', '/api/v1/changes'],
      ['PATCH', '/api/v1/portfolio'],
      ['GET', '/api/v1/portfolio/a/b/c'],
    ] as const) {
      const response = await s.request(method, path);
      const error = expectError(response, 404, 'ROUTE_NOT_FOUND');
      expect(error.message).toBe(`No endpoint ${method} ${path}.`);
    }
    // Without a session too: an unknown route is not a session problem.
    expectError(
      await s.request('GET', '/api/v1/nope?x=1', { session: null }),
      404,
      'ROUTE_NOT_FOUND',
    );
    // Even when a browser asks for HTML, /api stays the API.
    expectError(
      await s.request('GET', '/api/v1/nope', { headers: { accept: 'text/html' } }),
      404,
      'ROUTE_NOT_FOUND',
    );
  });

  it('answers malformed JSON with 400 MALFORMED_JSON and changes nothing', async () => {
    for (const body of ['{"memberBarcode": ', '{bad json}', "{'single': 1}", '[1,2', '']) {
      const response = await s.request('POST', '/api/v1/portfolio', {
        body,
        headers: { 'content-type': 'application/json' },
      });
      expectError(response, 400, 'MALFORMED_JSON');
    }
    const signIn = await s.request('POST', '/api/v1/appauth', {
      body: '{"username":',
      session: null,
    });
    expectError(signIn, 400, 'MALFORMED_JSON');
  });

  it('takes a DELETE without a body even when it says application/json', async () => {
    const session = await s.userSession('delete.me', 'viewer');
    const deleted = await s.request('DELETE', '/api/v1/users/delete.me', {
      headers: { 'content-type': 'application/json' },
    });
    expect(deleted.status).toBe(204);
    expect((await s.request('GET', '/api/v1/appauth', { session })).status).toBe(401);
  });

  it('answers a body that is not JSON with 415', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const response = await s.request('POST', '/api/v1/portfolio', {
        body: 'memberBarcode=M1',
        headers: { 'content-type': type },
      });
      expectError(response, 415, 'UNSUPPORTED_MEDIA_TYPE');
    }
    const charset = await s.request('POST', '/api/v1/portfolio', {
      body: portfolioBody({ portfolioId: 'with-charset' }),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(charset.status).toBe(201);
  });

  it('answers an over-large body with 413', async () => {
    const response = await s.request('POST', '/api/v1/portfolio', {
      body: portfolioBody({ portfolioId: 'too-big', projectDetail: 'x'.repeat(5000) }),
    });
    expectError(response, 413, 'PAYLOAD_TOO_LARGE');
    expectError(await s.request('GET', '/api/v1/portfolio/too-big'), 404, 'PORTFOLIO_NOT_FOUND');
  });

  it('keeps one shape for validation, auth, permission and conflict errors', async () => {
    const viewer = await s.userSession('shape.viewer', 'viewer');
    await s.request('POST', '/api/v1/portfolio', { body: portfolioBody({ portfolioId: 'dup' }) });
    const cases: Array<[Promise<ApiResponse>, number, Parameters<typeof expectError>[2]]> = [
      [s.request('POST', '/api/v1/portfolio', { body: { nope: 1 } }), 400, 'VALIDATION_FAILED'],
      [s.request('GET', '/api/v1/users', { session: null }), 401, 'UNAUTHORIZED'],
      [
        s.request('POST', '/api/v1/appauth', {
          body: { username: 'x', password: 'y' },
          session: null,
        }),
        401,
        'INVALID_CREDENTIALS',
      ],
      [s.request('GET', '/api/v1/users', { session: viewer }), 403, 'FORBIDDEN'],
      [s.request('GET', '/api/v1/users/nobody'), 404, 'USER_NOT_FOUND'],
      [
        s.request('POST', '/api/v1/portfolio', { body: portfolioBody({ portfolioId: 'dup' }) }),
        409,
        'ID_TAKEN',
      ],
    ];
    for (const [pending, status, code] of cases) {
      const response = await pending;
      const body = expectError(response, status, code);
      expect(Object.keys(body).sort()).toEqual(
        ['code', 'details', 'error', 'message', 'result', 'statusCode'].sort(),
      );
    }
  });
});

describe('API documentation', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  it('serves an OpenAPI document generated from the shared schemas, and its UI', async () => {
    const json = await s.request('GET', '/docs/json', { session: null });
    expect(json.status).toBe(200);
    expect(json.body.openapi).toMatch(/^3\./);
    for (const path of [
      '/api/v1/appauth',
      '/api/v1/portfolio',
      '/api/v1/portfolio/{portfolioId}',
      '/api/v1/users',
      '/api/v1/users/{username}',
    ])
      expect(Object.keys(json.body.paths)).toContain(path);
    const create = json.body.paths['/api/v1/portfolio'].post;
    const { $ref } = create.requestBody.content['application/json'].schema;
    expect($ref).toBe('#/components/schemas/CreatePortfolioBody');
    const schema = json.body.components.schemas.CreatePortfolioBody;
    expect(schema.required).toEqual(
      expect.arrayContaining(['memberBarcode', 'category', 'projectTitle', 'projectDetail']),
    );
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '400', '409']));
    const ui = await s.request('GET', '/docs', { session: null });
    expect(ui.status).toBe(200);
  });
});

describe('a failed write (500)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  const secret = () =>
    new Error(`ENOSPC: no space left on device, write '${s.dataDir}/journal-000000000001.ndjson'`);
  const expectNoLeak = (response: ApiResponse) => {
    const text = JSON.stringify(response.body);
    for (const leak of ['ENOSPC', s.dataDir, 'journal', 'at ', 'stack', '.ts'])
      expect(text).not.toContain(leak);
  };

  embeddedOnly('injects a journal write fault')(
    'answers 500 STORAGE_FAILURE without internals, keeps the old state, and keeps serving',
    async () => {
      const created = await s.request('POST', '/api/v1/portfolio', {
        body: portfolioBody({ portfolioId: 'kept', projectTitle: 'Original' }),
      });
      expect(created.status).toBe(201);
      const before = (await s.request('GET', '/api/v1/portfolio/kept')).body;

      // A failed create leaves no portfolio.
      embeddedStore(s.app).injectWriteFault(secret());
      const failedCreate = await s.request('POST', '/api/v1/portfolio', {
        body: portfolioBody({ portfolioId: 'lost' }),
      });
      expectError(failedCreate, 500, 'STORAGE_FAILURE');
      expectNoLeak(failedCreate);
      expectError(await s.request('GET', '/api/v1/portfolio/lost'), 404, 'PORTFOLIO_NOT_FOUND');

      // A failed update leaves the old version.
      embeddedStore(s.app).injectWriteFault(secret());
      const failedUpdate = await s.request('PUT', '/api/v1/portfolio/kept', {
        body: portfolioBody({ projectTitle: 'Changed', command: 'publish' }),
      });
      expectError(failedUpdate, 500, 'STORAGE_FAILURE');
      expectNoLeak(failedUpdate);
      expect((await s.request('GET', '/api/v1/portfolio/kept')).body).toEqual(before);

      // A failed user change leaves the user as it was.
      embeddedStore(s.app).injectWriteFault(secret());
      const failedUser = await s.request('POST', '/api/v1/users', {
        body: { username: 'faulty', password: 'faulty-password', role: 'viewer' },
      });
      expectError(failedUser, 500, 'STORAGE_FAILURE');
      expectError(await s.request('GET', '/api/v1/users/faulty'), 404, 'USER_NOT_FOUND');

      // A failed sign-in gives no session.
      embeddedStore(s.app).injectWriteFault(secret());
      const failedSignIn = await s.request('POST', '/api/v1/appauth', {
        body: { username: 'admin', password: 'admin-password-1' },
        session: null,
      });
      expectError(failedSignIn, 500, 'STORAGE_FAILURE');

      // The next writes succeed, and the failed ones can be retried.
      const retried = await s.request('POST', '/api/v1/portfolio', {
        body: portfolioBody({ portfolioId: 'lost' }),
      });
      expect(retried.status).toBe(201);
      const updated = await s.request('PUT', '/api/v1/portfolio/kept', {
        body: portfolioBody({ projectTitle: 'Changed', revision: 1 }),
      });
      expect(updated.status).toBe(200);
      expect(updated.body.revision).toBe(2);

      // What is on disk matches what was acknowledged.
      await s.stop();
      const again = await startTestServer({ dataDir: s.dataDir });
      try {
        expect((await again.request('GET', '/api/v1/portfolio/kept')).body).toMatchObject({
          projectTitle: 'Changed',
          revision: 2,
          published: false,
        });
        expect((await again.request('GET', '/api/v1/portfolio/lost')).status).toBe(200);
        expect((await again.request('GET', '/api/v1/users/faulty')).status).toBe(404);
      } finally {
        await again.stop();
      }
    },
  );

  embeddedOnly('injects a journal write fault')(
    'fails every write of a group that shared the failed fsync, and only those',
    async () => {
      const s2 = await startTestServer();
      try {
        embeddedStore(s2.app).injectWriteFault(new Error('EIO'));
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            s2.request('POST', '/api/v1/portfolio', {
              body: portfolioBody({ portfolioId: `g${i}` }),
            }),
          ),
        );
        for (const [i, result] of results.entries()) {
          const detail = await s2.request('GET', `/api/v1/portfolio/g${i}`);
          // Whatever the answer was, the state agrees with it.
          if (result.status === 201) expect(detail.status).toBe(200);
          else {
            expectError(result, 500, 'STORAGE_FAILURE');
            expect(detail.status).toBe(404);
          }
        }
        expect(results.some((r) => r.status === 500)).toBe(true);
        await s2.stop();
        const again = await startTestServer({ dataDir: s2.dataDir });
        try {
          for (const [i, result] of results.entries()) {
            const detail = await again.request('GET', `/api/v1/portfolio/g${i}`);
            expect(detail.status).toBe(result.status === 201 ? 200 : 404);
          }
        } finally {
          await again.stop();
        }
      } finally {
        await s2.close();
      }
    },
  );
});

describe('loopback Host check (DNS rebinding)', () => {
  let guarded: TestServer;
  let open: TestServer;
  beforeAll(async () => {
    guarded = await startTestServer({ loopbackOnly: true });
    open = await startTestServer({ loopbackOnly: false });
  });
  afterAll(() => Promise.all([guarded.close(), open.close()]));

  it('refuses a foreign Host with 403 while loopback-only', async () => {
    const port = new URL(guarded.url).port;
    for (const host of [
      'evil.example',
      `evil.example:${port}`,
      `localhost.evil.example:${port}`,
      `127.0.0.1.nip.io:${port}`,
      `192.168.1.10:${port}`,
    ]) {
      const response = await rawRequest(guarded.url, '/api/v1/appauth', {
        host,
        authorization: guarded.adminSession,
      });
      expectError(response, 403, 'HOST_NOT_ALLOWED');
    }
    const unknownRoute = await rawRequest(guarded.url, '/api/v1/nope', { host: 'evil.example' });
    expectError(unknownRoute, 403, 'HOST_NOT_ALLOWED');
  });

  it('answers loopback host names while loopback-only', async () => {
    const port = new URL(guarded.url).port;
    for (const host of [
      `localhost:${port}`,
      `127.0.0.1:${port}`,
      `[::1]:${port}`,
      'app.localhost',
      `127.0.0.2:${port}`,
    ]) {
      const response = await rawRequest(guarded.url, '/api/v1/appauth', {
        host,
        authorization: guarded.adminSession,
      });
      expect(response.status, host).toBe(200);
    }
  });

  it('answers any Host when shared on the LAN (not loopback-only)', async () => {
    const response = await rawRequest(open.url, '/api/v1/appauth', {
      host: 'portfolio.lan:8080',
      authorization: open.adminSession,
    });
    expect(response.status).toBe(200);
  });
});
