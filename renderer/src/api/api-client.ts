import createClient, { type Middleware } from 'openapi-fetch';
import type { ErrorBody } from '../../../shared';
import { ApiError, NetworkError } from './api-error';
import type { paths } from './openapi';

/**
 * The one way the renderer talks to the server. The session layer plugs in how to find the
 * session id and what to do when the server says it is no longer valid; the connectivity
 * layer learns whether the server answers at all.
 */
interface ApiHooks {
  getSessionId(): string | null;
  onUnauthorized(error: ApiError): void;
  onReachabilityChange(reachable: boolean): void;
}

let hooks: ApiHooks = {
  getSessionId: () => null,
  onUnauthorized: () => undefined,
  onReachabilityChange: () => undefined,
};

export function configureApi(next: Partial<ApiHooks>): void {
  hooks = { ...hooks, ...next };
}

export function currentSessionId(): string | null {
  return hooks.getSessionId();
}

/**
 * The server refuses a change made with only the session cookie unless this header says it
 * came from the app (a cross-site form cannot send it); any value does.
 */
const CLIENT_HEADER = { 'X-Portfolio-Client': 'web' };

/**
 * What every request carries: the client header, and the desktop shell's session as the
 * Authorization header. A browser sends none: its session travels as the HttpOnly cookie.
 */
export function authHeaders(): Record<string, string> {
  const sessionId = hooks.getSessionId();
  return sessionId ? { ...CLIENT_HEADER, Authorization: sessionId } : { ...CLIENT_HEADER };
}

/** fetch that tells the connectivity layer whether the server answered at all. */
async function reachableFetch(request: Request): Promise<Response> {
  try {
    const response = await fetch(request);
    hooks.onReachabilityChange(true);
    return response;
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    hooks.onReachabilityChange(false);
    throw new NetworkError(error);
  }
}

const withSession: Middleware = {
  onRequest({ request }) {
    for (const [name, value] of Object.entries(authHeaders())) request.headers.set(name, value);
    return request;
  },
};

function client() {
  return createClient<paths>({
    // The page's own origin: the server that served the renderer (tests outside a page set it).
    baseUrl: globalThis.location?.origin,
    fetch: reachableFetch,
    credentials: 'same-origin',
    headers: { Accept: 'application/json' },
  });
}

/**
 * The API, typed by the client generated from the server's OpenAPI document
 * (renderer/src/api/openapi.d.ts, `npm run api:generate`). Calls carry the session.
 */
export const api = client();
api.use(withSession);

/** Signing in: no session header, and its 401 is a wrong password, not an ended session. */
export const anonymousApi = client();

/** What openapi-fetch answers: the parsed body of a success, or of a failure. */
type Answer<T> = { data?: T; error?: unknown; response: Response };

/** The body of a successful answer; any other answer becomes an ApiError. */
export async function ok<T>(call: Promise<Answer<T>>, anonymous = false): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw apiErrorOf(response, error, anonymous);
  if (data === undefined) throw new ApiError(response.status, null);
  return data;
}

/** Waits for an answer without a body (204); any other failure becomes an ApiError. */
export async function done(call: Promise<Answer<unknown>>): Promise<void> {
  const { error, response } = await call;
  if (!response.ok) throw apiErrorOf(response, error);
}

/**
 * 401s the sync control API answers about the hub (a wrong password there, this device signed
 * out there): the session with this server is fine, so they must not sign the user out.
 */
const HUB_UNAUTHORIZED = new Set<string>(['HUB_SIGN_IN_FAILED', 'SYNC_DEVICE_REVOKED']);

/** Turns a non-2xx answer into an ApiError, and tells the session layer about a dead session. */
function apiErrorOf(response: Response, body: unknown, anonymous = false): ApiError {
  const retryAfter = Number(response.headers.get('Retry-After'));
  const error = new ApiError(
    response.status,
    isErrorBody(body) ? body : null,
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
  );
  const aboutHub = error.code !== null && HUB_UNAUTHORIZED.has(error.code);
  if (response.status === 401 && !anonymous && !aboutHub) hooks.onUnauthorized(error);
  return error;
}

/** For answers read outside the client (uploads through XMLHttpRequest). */
export async function errorFromResponse(response: Response): Promise<ApiError> {
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    // Not JSON (a proxy's error page, an empty body): the status alone must do.
  }
  return apiErrorOf(response, body);
}

function isErrorBody(body: unknown): body is ErrorBody {
  return typeof body === 'object' && body !== null && 'result' in body && body.result === 'error';
}

/** Whether the server answers at all; any HTTP status counts, only a network failure does not. */
export async function pingServer(): Promise<boolean> {
  try {
    await anonymousApi.HEAD('/api/v1/appauth', { cache: 'no-store' });
    return true;
  } catch {
    return false;
  }
}
