import type { FastifyRequest } from 'fastify';

/**
 * The web UI's session cookie (DESIGN §2): set at sign-in, accepted in place of the
 * Authorization header, cleared at sign-out. HttpOnly keeps it from scripts; SameSite=Strict
 * keeps it off requests started by other sites; a change authenticated by it alone must also
 * carry CLIENT_HEADER, which a cross-site form cannot send (and a cross-origin script cannot
 * send without a CORS preflight this server never grants). SameSite alone is not enough: it
 * treats another port of the same host as the same site.
 */
export const SESSION_COOKIE = 'portfolio_session';

/**
 * The cookie's name for the address the browser used: `portfolio_session`, with `_<port>` when
 * the address names a port. Browsers share cookies between the ports of one host, so two
 * servers there (the desktop app and a team server on one computer) would otherwise overwrite
 * each other's session at every sign-in.
 */
export function sessionCookieName(request: FastifyRequest): string {
  const port = /:(\d{1,5})$/.exec(request.headers.host ?? '')?.[1];
  return port ? `${SESSION_COOKIE}_${port}` : SESSION_COOKIE;
}

/** The header the app sends with every request (the web UI sends `web`); any value counts. */
export const CLIENT_HEADER = 'x-portfolio-client';

/** Only the API reads the cookie. */
const COOKIE_PATH = '/api';

/** Methods that change nothing; every other one needs CLIENT_HEADER beside a cookie. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The session id in the request's Cookie header, if it holds ours. */
export function sessionIdFromCookie(request: FastifyRequest): string | undefined {
  const cookieHeader = request.headers.cookie;
  if (!cookieHeader) return undefined;
  const name = sessionCookieName(request);
  for (const pair of cookieHeader.split(';')) {
    const at = pair.indexOf('=');
    if (at < 0 || pair.slice(0, at).trim() !== name) continue;
    const value = pair.slice(at + 1).trim();
    return value === '' ? undefined : value;
  }
  return undefined;
}

/** Whether this request changes something and so, with only the cookie, needs CLIENT_HEADER. */
export function needsClientHeader(request: FastifyRequest): boolean {
  if (SAFE_METHODS.has(request.method)) return false;
  const client = request.headers[CLIENT_HEADER];
  return typeof client !== 'string' || client.trim() === '';
}

/**
 * Secure when the browser reached us over TLS: directly, or through a proxy the server was told
 * to trust (PORTFOLIO_TRUST_PROXY, which makes `protocol` read X-Forwarded-Proto).
 */
function attributes(request: FastifyRequest): string {
  return `Path=${COOKIE_PATH}; HttpOnly; SameSite=Strict${request.protocol === 'https' ? '; Secure' : ''}`;
}

/** The Set-Cookie value that hands the browser a session living `lifetimeMs`. */
export function sessionCookie(request: FastifyRequest, sessionId: string, lifetimeMs: number) {
  const maxAge = Math.max(0, Math.floor(lifetimeMs / 1000));
  return `${sessionCookieName(request)}=${sessionId}; Max-Age=${maxAge}; ${attributes(request)}`;
}

/** The Set-Cookie value that makes the browser forget the session. */
export function clearedSessionCookie(request: FastifyRequest) {
  return `${sessionCookieName(request)}=; Max-Age=0; ${attributes(request)}`;
}
