import { connect, startHubAndReplica, type Node } from './two-process';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small real HTTP proxy in front of the hub: forwards every request as it is, except those
 * `inject` answers itself (a 500, a 410…). Counts the requests it saw.
 */
export interface Proxy {
  url: string;
  requests: number;
  inject: (
    method: string,
    path: string,
    index: number,
  ) => { status: number; body: unknown } | undefined;
  /**
   * A lost answer: the request reaches the hub and the hub answers it in full, but the proxy
   * then cuts the connection instead of passing the answer on (the hub applied what it was
   * sent; the caller never hears of it).
   */
  lose: (method: string, path: string, index: number) => boolean;
  /**
   * A cut connection: `'before'` closes the caller's connection before anything reaches the hub
   * (the hub never hears of the request); `'midway'` passes the hub's status line and headers on
   * and then cuts in the middle of the body. Anything else forwards as usual.
   */
  cut: (method: string, path: string, index: number) => 'before' | 'midway' | false;
  close(): Promise<void>;
}

export async function startProxy(target: string): Promise<Proxy> {
  const upstream = new URL(target);
  const proxy: Proxy = {
    url: '',
    requests: 0,
    inject: () => undefined,
    lose: () => false,
    cut: () => false,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((request, response) => {
    const index = ++proxy.requests;
    const injected = proxy.inject(request.method ?? 'GET', request.url ?? '/', index);
    if (injected) {
      request.resume();
      response.writeHead(injected.status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(injected.body));
      return;
    }
    const cut = proxy.cut(request.method ?? 'GET', request.url ?? '/', index);
    if (cut === 'before') {
      request.socket.destroy();
      return;
    }
    const lost = proxy.lose(request.method ?? 'GET', request.url ?? '/', index);
    const forward = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: request.method,
        path: request.url,
        headers: { ...request.headers, host: upstream.host },
      },
      (answer) => {
        if (lost) {
          // Read the hub's whole answer (so it is done), then cut the caller off.
          answer.resume();
          answer.on('end', () => request.socket.destroy());
          return;
        }
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        if (cut === 'midway') {
          // Headers and (at most) the first chunk of the body, then the connection is gone.
          response.flushHeaders();
          answer.once('data', (chunk: Buffer) => {
            response.write(chunk.subarray(0, Math.floor(chunk.length / 2)));
            answer.resume();
            setImmediate(() => request.socket.destroy());
          });
          answer.once('end', () => request.socket.destroy());
          return;
        }
        answer.pipe(response);
      },
    );
    forward.on('error', () => {
      if (!response.headersSent) response.writeHead(502);
      response.end();
    });
    request.pipe(forward);
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}

export const serverError = {
  status: 500,
  body: {
    result: 'error',
    statusCode: 500,
    error: 'Internal Server Error',
    code: 'INTERNAL',
    message: 'injected by the test proxy',
    details: [],
  },
};

/**
 * A hub and a replica (see startHubAndReplica), the replica connected to the hub through a proxy
 * in front of it, so that a test can make the hub's answers go wrong.
 */
export async function startPairBehindProxy(
  dirs: string[],
): Promise<{ hub: Node; replica: Node; proxy: Proxy; hubPort: number }> {
  const { hub, replica } = await startHubAndReplica(dirs);
  const proxy = await startProxy(hub.url);
  await connect(replica, hub, proxy.url);
  return { hub, replica, proxy, hubPort: Number(new URL(hub.url).port) };
}
