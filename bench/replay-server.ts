/**
 * Baseline: a bare Fastify route that answers each list URL with the bytes our server answered
 * for it (read from the JSON file named on the command line: an array of [path, body] pairs). It
 * does no work of ours, so its rate is the ceiling for answers of those sizes on this machine:
 * Node's HTTP, Fastify's routing and the client's parsing, nothing else.
 */
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const pairs = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as [string, string][];
const bodies = new Map(pairs.map(([path, body]) => [path, Buffer.from(body)]));

const app = Fastify({ logger: false });
app.get('/api/v1/portfolio', (request, reply) => {
  const body = bodies.get(request.url);
  if (!body) return reply.code(404).send({ error: 'not recorded' });
  return reply.type('application/json; charset=utf-8').send(body);
});
const address = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`LISTENING ${address}`);
