/**
 * npx tsx bench/facets.ts [--size 100000] [--seconds 5] [--connections 10] [--no-build]
 *
 * Facets (DESIGN §16) against the list in the same run, on the embedded store with the answer
 * cache off: the list's "every URL new" workload, then the facets of the whole library (the
 * counts kept on every write) and of a filter's matches (counted), each with its req/s and its
 * ratio to the list's. The target (issue 28): facets at ≥ 0.5× the list's req/s at 100k.
 * `npm run bench` runs the same mix as one of its rows.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon, { type Result } from 'autocannon';
import { buildEveryTree, runWorkload, sendEach } from './list-workload';
import { CATEGORIES, makePortfolios, seedDataDir } from './seed';
import { buildServer, signIn, startOurs } from './server-process';

const { values: args } = parseArgs({
  options: {
    size: { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
    'no-build': { type: 'boolean', default: false },
  },
});
const seconds = Number(args.seconds);
const connections = Number(args.connections);

async function main(): Promise<void> {
  if (!args['no-build']) buildServer();
  const records = makePortfolios(Number(args.size));
  const dataDir = await mkdtemp(join(tmpdir(), 'portfolio-bench-facets-'));
  try {
    await seedDataDir(dataDir, records);
    const server = await startOurs(dataDir, { PORTFOLIO_LIST_CACHE_MB: '0' });
    const session = await signIn(server.url);
    const headers = { authorization: session };
    await buildEveryTree(server.url, headers);
    const target = { url: server.url, session };
    await runWorkload(target, records, { kind: 'list', seed: 99, seconds: 2, connections });
    const list = await runWorkload(target, records, {
      kind: 'list',
      seed: 7,
      seconds,
      connections,
    });
    const facetsOf = async (filtered: boolean) => {
      let turn = 0;
      const next = () => {
        turn++;
        const params = new URLSearchParams({ keys: 'category,generalTag,readyToBuy' });
        if (filtered) params.set('filter', `category:${CATEGORIES[turn % CATEGORIES.length]}`);
        return { method: 'GET', path: `/api/v1/portfolio/facets?${params}` };
      };
      await autocannon({
        url: server.url,
        connections,
        duration: 1,
        headers,
        requests: sendEach(next),
      });
      return autocannon({
        url: server.url,
        connections,
        duration: seconds,
        headers,
        requests: sendEach(next),
      });
    };
    const whole = await facetsOf(false);
    const filtered = await facetsOf(true);
    const mixed = await runWorkload(target, records, {
      kind: 'facets',
      seed: 7,
      seconds,
      connections,
    });
    await server.stop();
    const rate = (result: Result) => result.requests.average;
    const row = (name: string, result: Result) => {
      const errors = result.errors + result.non2xx;
      console.log(
        `  ${name.padEnd(40)} ${rate(result).toFixed(0).padStart(6)} req/s  p50 ${result.latency.p50} ms  p99 ${result.latency.p99} ms  ` +
          `${(rate(result) / rate(list)).toFixed(2)}× list${errors ? `  ERRORS ${errors}` : ''}`,
      );
    };
    console.log(
      `\nfacets vs list at ${records.length} portfolios (${connections} connections, ${seconds} s each)`,
    );
    row('list, every URL new', list);
    row('facets, whole library (kept counts)', whole);
    row('facets, one category (counted)', filtered);
    row('facets, workload mix (half filtered)', mixed);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
