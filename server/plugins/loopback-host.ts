import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../errors';

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * A Host header as RFC 9110 allows it: a bracketed IPv6 literal or a registered name / IPv4
 * address, then an optional port. Anything else (userinfo `a@b`, a name after `]`, spaces) is
 * not a host, whatever a lenient parser would make of it.
 */
const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?$/i;

/** The host name of a Host header value, without the port; '' when it is not a valid Host. */
export function hostName(host: string | undefined): string {
  const match = host === undefined ? null : HOST_HEADER.exec(host);
  return match ? match[1]!.toLowerCase() : '';
}

export function isLoopbackHostName(name: string): boolean {
  return (
    LOOPBACK_NAMES.has(name) || name.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(name)
  );
}

/** Node keeps the first of several Host headers and drops the rest; count them on the wire. */
function hostHeaderCount(request: FastifyRequest): number {
  const raw = request.raw.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === 'host') count++;
  return count;
}

/**
 * DNS-rebinding defence: while the server listens on loopback only, a page on another origin
 * can still reach it through a DNS name that resolves to 127.0.0.1; the Host header gives it away.
 */
export default fp(
  async function loopbackHost(app: FastifyInstance, options: { enabled: () => boolean }) {
    // Callback style: it runs on every request, and an async hook costs a promise more.
    app.addHook('onRequest', (request, _reply, done) => {
      if (
        options.enabled() &&
        (!isLoopbackHostName(hostName(request.headers.host)) || hostHeaderCount(request) !== 1)
      ) {
        return done(new ApiError('HOST_NOT_ALLOWED'));
      }
      done();
    });
  },
  { name: 'loopback-host' },
);
