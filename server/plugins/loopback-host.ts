import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../errors';

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** The host name of a Host header value, without the port. */
export function hostName(host: string | undefined): string {
  if (!host) return '';
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1).toLowerCase();
  return host.split(':')[0]!.toLowerCase();
}

export function isLoopbackHostName(name: string): boolean {
  return (
    LOOPBACK_NAMES.has(name) || name.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(name)
  );
}

/**
 * DNS-rebinding defence: while the server listens on loopback only, a page on another origin
 * can still reach it through a DNS name that resolves to 127.0.0.1; the Host header gives it away.
 */
export default fp(
  async function loopbackHost(app: FastifyInstance, options: { enabled: () => boolean }) {
    // Callback style: it runs on every request, and an async hook costs a promise more.
    app.addHook('onRequest', (request, _reply, done) => {
      if (options.enabled() && !isLoopbackHostName(hostName(request.headers.host))) {
        return done(new ApiError('HOST_NOT_ALLOWED'));
      }
      done();
    });
  },
  { name: 'loopback-host' },
);
