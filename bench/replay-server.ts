/**
 * Baseline: a bare Fastify route that answers each list URL with the bytes our server answered
 * for it (read from the JSON file named on the command line: an array of [path, body] pairs). It
 * does no work of ours, so its rate is the ceiling for answers of those sizes on this machine:
 * Node's HTTP, Fastify's routing and the client's parsing, nothing else.
 *
 * With SPIN_US set, each answer first spins that many µs: a server as busy per request as ours,
 * so that the client, not the server, waits (bench/list-budget.ts), which costs the server's
 * sends more than when the client is the bottleneck.
 */
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const pairs = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as [string, string][];
const bodies = new Map(pairs.map(([path, body]) => [path, Buffer.from(body)]));

const spinMs = Number(process.env.SPIN_US ?? 0) / 1000;

const app = Fastify({ logger: false });
app.get('/api/v1/portfolio', (request, reply) => {
  if (spinMs > 0) for (const until = performance.now() + spinMs; performance.now() < until;);
  const body = bodies.get(request.url);
  if (!body) return reply.code(404).send({ error: 'not recorded' });
  return reply.type('application/json; charset=utf-8').send(body);
});
// Stops with a normal exit, so that node's --cpu-prof can write its profile.
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
const address = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`LISTENING ${address}`);
