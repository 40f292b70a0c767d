import type { ErrorBody } from '../../../shared';
import { ApiError, NetworkError } from './api-error';

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

export type QueryValue = string | number | boolean | undefined | null;

export interface RequestOptions {
  query?: Record<string, QueryValue>;
  body?: unknown;
  signal?: AbortSignal;
  /** Sign-in must not trigger the "session ended" flow on its own 401. */
  anonymous?: boolean;
  /** Extra request headers, e.g. `If-Match` for a conditional delete. */
  headers?: Record<string, string>;
}

export function apiUrl(path: string, query?: Record<string, QueryValue>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  }
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}

export function authHeaders(): Record<string, string> {
  const sessionId = hooks.getSessionId();
  return sessionId ? { Authorization: sessionId } : {};
}

async function send(method: string, path: string, options: RequestOptions): Promise<Response> {
  const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
  if (!options.anonymous) Object.assign(headers, authHeaders());
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  try {
    const response = await fetch(apiUrl(path, options.query), {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
      credentials: 'same-origin',
    });
    hooks.onReachabilityChange(true);
    return response;
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    hooks.onReachabilityChange(false);
    throw new NetworkError(error);
  }
}

/** Turns a non-2xx answer into an ApiError, and tells the session layer about a dead session. */
export async function errorFromResponse(response: Response, anonymous = false): Promise<ApiError> {
  const retryAfter = Number(response.headers.get('Retry-After'));
  const error = new ApiError(
    response.status,
    await readErrorBody(response),
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
  );
  if (response.status === 401 && !anonymous) hooks.onUnauthorized(error);
  return error;
}

async function readErrorBody(response: Response): Promise<ErrorBody | null> {
  try {
    const body: unknown = await response.json();
    if (body && typeof body === 'object' && (body as ErrorBody).result === 'error')
      return body as ErrorBody;
  } catch {
    // Not JSON (a proxy's error page, an empty body): the status alone must do.
  }
  return null;
}

export async function apiRequest<T>(
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<T> {
  const response = await send(method, path, options);
  if (!response.ok) throw await errorFromResponse(response, options.anonymous);
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** Fetches bytes that need the session header (images and downloads cannot carry it in <img src>). */
export async function apiBlob(
  path: string,
  query?: Record<string, QueryValue>,
  signal?: AbortSignal,
): Promise<Blob> {
  const response = await send('GET', path, { query, signal });
  if (!response.ok) throw await errorFromResponse(response);
  return response.blob();
}

/** Whether the server answers at all; any HTTP status counts, only a network failure does not. */
export async function pingServer(): Promise<boolean> {
  try {
    await fetch('/api/v1/appauth', { method: 'GET', cache: 'no-store' });
    hooks.onReachabilityChange(true);
    return true;
  } catch {
    hooks.onReachabilityChange(false);
    return false;
  }
}
