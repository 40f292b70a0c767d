import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../server/app';
import { desktopAppOptions } from '../../electron/main/app-options';
import { FAST_AUTH } from '../helpers/test-server';

/** The embedded server exactly as the desktop app builds it, with a cheap scrypt for speed. */
export function buildDesktopApp(dataDir: string): Promise<FastifyInstance> {
  return buildApp({
    ...desktopAppOptions({ dataDir, rendererDir: null, logLevel: 'silent' }),
    logger: false,
    auth: FAST_AUTH,
  });
}

/** A port nobody listens on right now (another process could take it; fine for tests). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host: '0.0.0.0', port: 0 }, () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export interface RawResponse {
  status: number;
  body: string;
}

/** A GET with a chosen Host header (fetch does not let a caller set Host). */
export function rawGet(url: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'GET', headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Resolves to the error code when nothing listens (ECONNREFUSED), or to the HTTP status. */
export async function probe(url: string): Promise<number | string> {
  try {
    return (await rawGet(url)).status;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'error';
  }
}
