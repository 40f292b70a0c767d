import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render } from '@testing-library/react';
import type { ReactNode } from 'react';
import { MemoryRouter } from 'react-router';
import { afterEach, vi } from 'vitest';
import { ToastProvider } from '../../../renderer/src/components/ToastProvider';

/** One request the component made, as the server would have seen it. */
export interface SeenRequest {
  method: string;
  path: string;
  body: unknown;
  authorization: string | null;
  /** X-Portfolio-Client, which the server needs beside a cookie-only session on changes. */
  client: string | null;
}

type Reply = { status: number; body?: unknown };
type Handler = (request: SeenRequest) => Reply;

/**
 * The HTTP side of a component test: answers by "METHOD /path?query" with the API's own shapes
 * (docs/API.md), and keeps every request so tests can check what was sent.
 */
export class FakeApi {
  readonly requests: SeenRequest[] = [];
  readonly #routes = new Map<string, Handler>();

  on(route: string, handler: Handler | Reply): this {
    this.#routes.set(route, typeof handler === 'function' ? handler : () => handler);
    return this;
  }

  sent(route: string): SeenRequest[] {
    return this.requests.filter((request) => `${request.method} ${request.path}` === route);
  }

  readonly fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    // openapi-fetch hands over a Request; plain calls a URL and their init.
    const request = input instanceof Request ? input : new Request(String(input), init);
    const url = new URL(request.url);
    const text = await request.text();
    const seen: SeenRequest = {
      method: request.method.toUpperCase(),
      path: `${url.pathname}${url.search}`,
      body: text ? JSON.parse(text) : undefined,
      authorization: request.headers.get('Authorization'),
      client: request.headers.get('X-Portfolio-Client'),
    };
    this.requests.push(seen);
    const handler = this.#routes.get(`${seen.method} ${seen.path}`);
    const reply = handler
      ? handler(seen)
      : { status: 404, body: errorBody('ROUTE_NOT_FOUND', 'No such endpoint.') };
    return new Response(
      reply.status === 204 || reply.body === undefined ? null : JSON.stringify(reply.body),
      { status: reply.status, headers: { 'Content-Type': 'application/json' } },
    );
  };
}

/** The one error shape (DESIGN §6). */
export function errorBody(code: string, message: string) {
  return { result: 'error', code, message };
}

/** Installs a fake API as the page's fetch for this test. */
export function useFakeApi(): FakeApi {
  const api = new FakeApi();
  vi.stubGlobal('fetch', api.fetch);
  return api;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

/** Renders with what the app gives every page: queries, a router and toasts. */
export function renderWithApp(ui: ReactNode, { route = '/' }: { route?: string } = {}) {
  const queryClient = new QueryClient({
    defaultOptions: { queries: { retry: false }, mutations: { retry: false } },
  });
  const result = render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={[route]}>
        <ToastProvider>{ui}</ToastProvider>
      </MemoryRouter>
    </QueryClientProvider>,
  );
  return { ...result, queryClient };
}
