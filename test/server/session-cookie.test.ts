import { afterEach, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/error-body';
import {
  ADMIN,
  portfolioBody,
  startTestServer,
  type ApiResponse,
  type TestServer,
} from '../helpers/test-server';

/** DESIGN §2: the web UI's session cookie, over real HTTP. */

const servers: TestServer[] = [];
async function server(options: Parameters<typeof startTestServer>[0] = {}) {
  const started = await startTestServer(options);
  servers.push(started);
  return started;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** Signs in as the admin (with extra request headers) and answers the raw answer. */
async function signIn(s: TestServer, headers: Record<string, string> = {}) {
  const response = await s.request<{ sessionId: string }>('POST', '/api/v1/appauth', {
    body: ADMIN,
    session: null,
    headers,
  });
  expect(response.status).toBe(200);
  return response;
}

/** The cookie's name at this server's address: the port is part of it. */
const nameAt = (s: TestServer) => `portfolio_session_${new URL(s.url).port}`;

/** The `name=value` part of a Set-Cookie answer, as a browser sends it back. */
function cookieOf(response: ApiResponse): string {
  const setCookie = response.headers.get('set-cookie');
  expect(setCookie).toBeTruthy();
  return setCookie!.split(';')[0]!;
}

function attributesOf(response: ApiResponse): string[] {
  return (response.headers.get('set-cookie') ?? '')
    .split(';')
    .slice(1)
    .map((part) => part.trim());
}

describe('the session cookie set at sign-in', () => {
  it('holds the session, HttpOnly and SameSite=Strict, for the API only, as long as the session lives', async () => {
    const s = await server();
    const response = await signIn(s);
    expect(cookieOf(response)).toBe(`${nameAt(s)}=${response.body.sessionId}`);
    expect(attributesOf(response).sort()).toEqual(
      ['HttpOnly', 'Max-Age=43200', 'Path=/api', 'SameSite=Strict'].sort(),
    );
  });

  it('is named for the port, so two servers on one host keep their own sessions', async () => {
    const [one, two] = [await server(), await server()];
    const cookieOne = cookieOf(await signIn(one));
    const cookieTwo = cookieOf(await signIn(two));
    expect(cookieOne.startsWith(`${nameAt(one)}=`)).toBe(true);
    // A browser sends both to either port; each server reads only its own.
    const cookie = `${cookieTwo}; ${cookieOne}`;
    for (const s of [one, two]) {
      const me = await s.request('GET', '/api/v1/appauth', { session: null, headers: { cookie } });
      expect(me.status).toBe(200);
    }
    const foreign = await one.request('GET', '/api/v1/appauth', {
      session: null,
      headers: { cookie: cookieTwo },
    });
    expectError(foreign, 401, 'UNAUTHORIZED');
  });

  it('is Secure when a trusted proxy says the browser used TLS, and only then', async () => {
    const trusting = await server({ trustProxy: 'loopback' });
    expect(attributesOf(await signIn(trusting, { 'x-forwarded-proto': 'https' }))).toContain(
      'Secure',
    );
    expect(attributesOf(await signIn(trusting))).not.toContain('Secure');
    // Anyone can send the header; without a trusted proxy it means nothing.
    const plain = await server();
    expect(attributesOf(await signIn(plain, { 'x-forwarded-proto': 'https' }))).not.toContain(
      'Secure',
    );
  });
});

describe('a request authenticated by the cookie alone', () => {
  it('may read: GET who-am-I answers the signed-in user', async () => {
    const s = await server();
    const cookie = cookieOf(await signIn(s));
    const me = await s.request('GET', '/api/v1/appauth', { session: null, headers: { cookie } });
    expect(me.status).toBe(200);
    expect(me.body.user.username).toBe(ADMIN.username);
    const list = await s.request('GET', '/api/v1/portfolio', {
      session: null,
      headers: { cookie },
    });
    expect(list.status).toBe(200);
  });

  it('may not change anything without X-Portfolio-Client: 403 in the one shape, nothing made', async () => {
    const s = await server();
    const cookie = cookieOf(await signIn(s));
    const refused = await s.request('POST', '/api/v1/portfolio', {
      session: null,
      headers: { cookie },
      body: portfolioBody(),
    });
    expectError(refused, 403, 'CLIENT_HEADER_REQUIRED');
    const listed = await s.request('GET', '/api/v1/portfolio');
    expect(listed.body.lists).toEqual([]);

    const made = await s.request('POST', '/api/v1/portfolio', {
      session: null,
      headers: { cookie, 'x-portfolio-client': 'web' },
      body: portfolioBody(),
    });
    expect(made.status).toBe(201);
  });

  it('refuses what a cross-site form sends (before its body is looked at)', async () => {
    const s = await server();
    const cookie = cookieOf(await signIn(s));
    const form = await s.request('POST', '/api/v1/users', {
      session: null,
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'username=mallory&password=mallory-password&role=admin',
    });
    expectError(form, 403, 'CLIENT_HEADER_REQUIRED');
    const blank = await s.request('DELETE', '/api/v1/appauth', {
      session: null,
      headers: { cookie, 'x-portfolio-client': ' ' },
    });
    expectError(blank, 403, 'CLIENT_HEADER_REQUIRED');
    // The session outlived both.
    const me = await s.request('GET', '/api/v1/appauth', { session: null, headers: { cookie } });
    expect(me.status).toBe(200);
  });

  it('gives way to an Authorization header, which needs no X-Portfolio-Client', async () => {
    const s = await server();
    const cookie = cookieOf(await signIn(s));
    const withHeader = await s.request('POST', '/api/v1/portfolio', {
      headers: { cookie: `${nameAt(s)}=not-a-session-at-all` },
      body: portfolioBody(),
    });
    expect(withHeader.status).toBe(201);
    const wrongHeader = await s.request('GET', '/api/v1/appauth', {
      session: 'not-a-valid-session-id-0000',
      headers: { cookie },
    });
    expectError(wrongHeader, 401, 'UNAUTHORIZED');
  });
});

describe('signing out with the cookie', () => {
  it('ends the session and clears the cookie; a dead cookie is cleared when sent again', async () => {
    const s = await server();
    const cookie = cookieOf(await signIn(s));
    const out = await s.request('DELETE', '/api/v1/appauth', {
      session: null,
      headers: { cookie, 'x-portfolio-client': 'web' },
    });
    expect(out.status).toBe(204);
    expect(cookieOf(out)).toBe(`${nameAt(s)}=`);
    expect(attributesOf(out)).toContain('Max-Age=0');

    const after = await s.request('GET', '/api/v1/appauth', { session: null, headers: { cookie } });
    expectError(after, 401, 'UNAUTHORIZED');
    expect(after.headers.get('set-cookie')).toMatch(new RegExp(`^${nameAt(s)}=; Max-Age=0;`));
  });
});

describe('the OpenAPI document', () => {
  it('names the cookie as a security scheme beside the header, and the 403 on changes', async () => {
    const s = await server();
    const document = (await s.request('GET', '/docs/json', { session: null })).body;
    expect(document.components.securitySchemes.webSession).toMatchObject({
      type: 'apiKey',
      in: 'cookie',
      name: 'portfolio_session',
    });
    const create = document.paths['/api/v1/portfolio'].post;
    expect(create.security).toEqual([{ session: [] }, { webSession: [] }]);
    expect(create.responses['403'].description).toContain('CLIENT_HEADER_REQUIRED');
    const list = document.paths['/api/v1/portfolio'].get;
    expect(list.responses['403']?.description ?? '').not.toContain('CLIENT_HEADER_REQUIRED');
  });
});
