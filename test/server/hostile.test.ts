import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/error-body';
import {
  portfolioBody,
  startTestServer,
  type ApiResponse,
  type TestServer,
} from '../helpers/test-server';

/**
 * What a hostile client tried (issue 24, points 2 and 6): every answer is a 4xx in the one error
 * shape (DESIGN §6), documented in the OpenAPI document, and authorization comes first.
 */
describe('hostile requests get a documented 4xx in the one shape', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  /** A GET sent exactly as written: fetch would resolve `%2e%2e` and refuse `%zz` itself. */
  function raw(path: string, headers: Record<string, string> = {}): Promise<ApiResponse> {
    return new Promise((resolve, reject) => {
      const sent = request(`${s.url}/`, { path, headers }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          const answerHeaders = new Headers();
          for (const [key, value] of Object.entries(response.headers))
            if (typeof value === 'string') answerHeaders.set(key, value);
          resolve({ status: response.statusCode!, body: JSON.parse(text), headers: answerHeaders });
        });
      });
      sent.on('error', reject);
      sent.end();
    });
  }

  it('a path out of the API docs folder is a 404, not a 500', async () => {
    for (const path of [
      '/docs/static/%2e%2e/%2e%2e/package.json',
      '/docs/static/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
    ]) {
      expectError(await raw(path), 404, 'ROUTE_NOT_FOUND');
    }
  });

  it('a malformed percent-encoding: 401 without a session, then 400, in the one shape', async () => {
    expectError(await raw('/api/v1/portfolio/%zz'), 401, 'UNAUTHORIZED');
    expectError(
      await raw('/api/v1/portfolio/%zz', { authorization: 'not-a-session-at-all-0000' }),
      401,
      'UNAUTHORIZED',
    );
    const refused = expectError(
      await raw('/api/v1/portfolio/%zz', { authorization: s.adminSession }),
      400,
      'VALIDATION_FAILED',
    );
    expect(refused.message).toMatch(/address is not valid/);
    // Outside the API nothing needs a session.
    expectError(await raw('/some/page/%zz'), 400, 'VALIDATION_FAILED');
  });

  it('a path parameter over 100 characters: 401 first, then a documented 400', async () => {
    const long = 'a'.repeat(200);
    expectError(
      await s.request('GET', `/api/v1/users/${long}`, { session: null }),
      401,
      'UNAUTHORIZED',
    );
    for (const path of [
      `/api/v1/users/${long}`,
      `/api/v1/portfolio/${long}`,
      `/api/v1/portfolio/p1/files/${'f'.repeat(5000)}`,
    ]) {
      expectError(await s.request('GET', path), 400, 'VALIDATION_FAILED');
    }
  });

  it('a JSON body sent to an operation that takes none is ignored; any other is refused, documented', async () => {
    const session = await s.signIn('admin', 'admin-password-1');
    // s.request checks every answer against the OpenAPI document.
    expectError(
      await s.request('DELETE', '/api/v1/users/nobody', { body: { surprise: true } }),
      404,
      'USER_NOT_FOUND',
    );
    expectError(
      await s.request('DELETE', '/api/v1/users/nobody', {
        body: 'hello',
        headers: { 'content-type': 'text/plain' },
      }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expectError(
      await s.request('POST', '/api/v1/sync/run', { body: '{bad' }),
      400,
      'MALFORMED_JSON',
    );
    const run = await s.request('POST', '/api/v1/sync/run', { body: {} });
    expect(run.status).toBe(404);
    expect(['SYNC_NOT_CONFIGURED', 'SYNC_UNAVAILABLE']).toContain(run.body.code);
    expect((await s.request('DELETE', '/api/v1/appauth', { session, body: { a: 1 } })).status).toBe(
      204,
    );
  });

  it('a request line over 16 KB: a documented 413 in the one shape, on GET too', async () => {
    for (const path of ['/api/v1/portfolio', '/api/v1/changes', '/api/v1/users']) {
      const answer = await s.request('GET', `${path}?q=${'a'.repeat(17_000)}`);
      expectError(answer, 413, 'PAYLOAD_TOO_LARGE');
    }
  });

  it('a mutation naming a blob by anything but a SHA-256 is refused alone, with 400', async () => {
    const good = {
      mutationId: 'ok',
      portfolioId: 'hostile-ok',
      op: 'create',
      fields: portfolioBody(),
    };
    const bad = [
      { files: ['ZZ'] },
      { files: ['A'.repeat(64)] },
      { files: ['../../etc/passwd'] },
      {
        fields: {
          ...portfolioBody(),
          cover: { fileId: 'c1', sha256: 'A'.repeat(64), originalFilename: 'a.png' },
        },
      },
      {
        fields: {
          ...portfolioBody(),
          draftingProcess: [{ fileId: 'd1', sha256: 'x', originalFilename: 'a.png' }],
        },
      },
    ].map((part, index) => ({
      mutationId: `bad-${index}`,
      portfolioId: `hostile-bad-${index}`,
      op: 'create',
      fields: portfolioBody(),
      ...part,
    }));
    const answer = await s.request('POST', '/api/v1/sync/mutations', {
      body: { replicaId: 'hostile-replica', mutations: [...bad, good] },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const results = answer.body.results as Array<{ status: string; error?: { code: string } }>;
    expect(results.map((result) => result.status)).toEqual([
      ...bad.map(() => 'rejected'),
      'applied',
    ]);
    for (const result of results.slice(0, bad.length))
      expect(result.error?.code).toBe('VALIDATION_FAILED');
    for (let index = 0; index < bad.length; index++)
      expectError(
        await s.request('GET', `/api/v1/portfolio/hostile-bad-${index}`),
        404,
        'PORTFOLIO_NOT_FOUND',
      );
  });
});

describe('creating needs allowEdit for the category, over REST and sync alike (DESIGN §2)', () => {
  let s: TestServer;
  let editor: string;
  let device: string;
  beforeAll(async () => {
    s = await startTestServer();
    editor = await s.userSession('ceramics-editor', 'editor', ['Ceramics']);
    const made = await s.request('POST', '/api/v1/devices', {
      session: editor,
      body: { name: 'Studio', replicaId: 'ceramics-replica' },
    });
    device = `Bearer ${made.body.token}`;
  });
  afterAll(() => s.close());

  it('over REST: 403 outside allowEdit, before the other fields are judged; created inside it', async () => {
    expectError(
      await s.request('POST', '/api/v1/portfolio', {
        session: editor,
        body: portfolioBody({ category: 'Print' }),
      }),
      403,
      'CATEGORY_NOT_ALLOWED',
    );
    expectError(
      await s.request('POST', '/api/v1/portfolio', {
        session: editor,
        body: { category: 'Print', projectTitle: 12 },
      }),
      403,
      'CATEGORY_NOT_ALLOWED',
    );
    const made = await s.request('POST', '/api/v1/portfolio', {
      session: editor,
      body: portfolioBody({ category: 'Ceramics' }),
    });
    expect(made.status).toBe(201);
    const list = await s.request('GET', '/api/v1/portfolio?filter=category:Print');
    expect(list.body.total).toBe(0);
  });

  it('over sync: the same refusal, the portfolio is not made', async () => {
    const answer = await s.request('POST', '/api/v1/sync/mutations', {
      session: device,
      body: {
        replicaId: 'ceramics-replica',
        mutations: [
          {
            mutationId: 'print-1',
            portfolioId: 'print-1',
            op: 'create',
            fields: portfolioBody({ category: 'Print' }),
          },
        ],
      },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.results[0]).toMatchObject({
      status: 'rejected',
      error: { code: 'FORBIDDEN', message: expect.stringContaining('Print') },
    });
    expectError(await s.request('GET', '/api/v1/portfolio/print-1'), 404, 'PORTFOLIO_NOT_FOUND');
  });
});

describe('a replayed mutation after its portfolio was purged (DESIGN §10)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  it('answers the stored result of a create and makes nothing again', async () => {
    const push = () =>
      s.request('POST', '/api/v1/sync/mutations', {
        body: {
          replicaId: 'replay-replica',
          mutations: [
            {
              mutationId: 'create-once',
              portfolioId: 'replayed',
              op: 'create',
              fields: portfolioBody(),
            },
          ],
        },
      });
    const first = await push();
    expect(first.body.results[0]).toMatchObject({ status: 'applied', revision: 1 });
    expect((await s.request('DELETE', '/api/v1/portfolio/replayed')).status).toBe(204);
    expect((await s.request('DELETE', '/api/v1/trash/replayed')).status).toBe(204);
    const again = await push();
    expect(again.status).toBe(200);
    expect(again.body.results[0]).toMatchObject({
      mutationId: 'create-once',
      status: 'applied',
      revision: 1,
    });
    expectError(await s.request('GET', '/api/v1/portfolio/replayed'), 404, 'PORTFOLIO_NOT_FOUND');
    const feed = await s.request('GET', '/api/v1/changes?since=0');
    expect(
      feed.body.changes.filter(
        (change: { portfolioId: string }) => change.portfolioId === 'replayed',
      ),
    ).toEqual([expect.objectContaining({ deleted: true })]);
  });
});
