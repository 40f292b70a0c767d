import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server';

/** A small real HTTP server answering every request with `answer`. */
async function fakeServer(
  answer: (path: string) => { status: number; body: unknown },
): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    const { status, body } = answer(request.url ?? '/');
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** The replica's control API (DESIGN §10): admin only, errors in words, no token shown. */
describe('sync control API', () => {
  let replica: TestServer;
  let editor: string;
  const fakes: Server[] = [];

  beforeAll(async () => {
    replica = await startTestServer({ sync: { intervalMs: 0 } });
    editor = await replica.userSession('editor1', 'editor', ['Art']);
  });
  afterAll(async () => {
    await replica.close();
    for (const server of fakes) server.close();
  });

  it('is admin only: an editor gets 403 before any validation', async () => {
    for (const [method, path, body] of [
      ['GET', '/api/v1/sync/status'],
      ['GET', '/api/v1/sync/config'],
      ['PUT', '/api/v1/sync/config', { nonsense: true }],
      ['DELETE', '/api/v1/sync/config'],
      ['POST', '/api/v1/sync/run'],
    ] as const) {
      const response = await replica.request(method, path, { session: editor, body });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(response.body.code).toBe('FORBIDDEN');
    }
    expect((await replica.request('GET', '/api/v1/sync/status', { session: null })).status).toBe(
      401,
    );
  });

  it('says no hub is set up (200, not an error), and the status says why', async () => {
    const config = await replica.request('GET', '/api/v1/sync/config');
    expect(config.status).toBe(200);
    expect(config.body).toEqual({ configured: false, available: true });
    const run = await replica.request('POST', '/api/v1/sync/run');
    expect(run.status).toBe(404);
    expect(run.body.code).toBe('SYNC_NOT_CONFIGURED');
    const status = await replica.request('GET', '/api/v1/sync/status');
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({
      state: 'error',
      lastSuccess: null,
      pending: { changes: 0, blobs: 0, bytes: 0 },
      conflicts: 0,
    });
    expect(status.body.lastError).toMatchObject({ code: 'SYNC_NOT_CONFIGURED' });
  });

  it('validates the body (400) for an admin', async () => {
    const response = await replica.request('PUT', '/api/v1/sync/config', {
      body: { hubUrl: 'http://x' },
    });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_FAILED');
  });

  it('says in words when the hub cannot be reached or the address is no address', async () => {
    const closed = await fakeServer(() => ({ status: 200, body: {} }));
    closed.server.close();
    const response = await replica.request('PUT', '/api/v1/sync/config', {
      body: { hubUrl: closed.url, username: 'a', password: 'b' },
    });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('HUB_UNREACHABLE');
    expect(response.body.message).toMatch(/cannot be reached \(nothing answers at that address\)/);
    expect(response.body.message).not.toMatch(/E[A-Z]{4,}|UND_ERR/);
    const bad = await replica.request('PUT', '/api/v1/sync/config', {
      body: { hubUrl: 'not a url', username: 'a', password: 'b' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('HUB_UNREACHABLE');
    expect(bad.body.message).toMatch(/not a web address/);
  });

  it('refuses a server of another product, and a hub too old', async () => {
    const other = await fakeServer(() => ({
      status: 200,
      body: { product: 'gitea', protocol: 9 },
    }));
    const notFound = await fakeServer(() => ({ status: 404, body: { message: 'no' } }));
    const old = await fakeServer(() => ({
      status: 200,
      body: { product: 'portfolio-manager', protocol: 0, version: '0.1.0' },
    }));
    fakes.push(other.server, notFound.server, old.server);
    for (const url of [other.url, notFound.url]) {
      const response = await replica.request('PUT', '/api/v1/sync/config', {
        body: { hubUrl: url, username: 'a', password: 'b' },
      });
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('HUB_NOT_PORTFOLIO');
      expect(response.body.message).toMatch(/not a Portfolio Manager server/);
    }
    const response = await replica.request('PUT', '/api/v1/sync/config', {
      body: { hubUrl: old.url, username: 'a', password: 'b' },
    });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('HUB_TOO_OLD');
    expect(response.body.message).toBe(
      'hub too old: it speaks sync protocol 0, this app needs 1; update the hub',
    );
    // Nothing was configured by any of these.
    expect((await replica.request('GET', '/api/v1/sync/config')).body).toEqual({
      configured: false,
      available: true,
    });
  });
});
