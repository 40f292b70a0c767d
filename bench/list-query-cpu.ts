/**
 * npx tsx bench/list-query-cpu.ts [size]   (default 10000)
 *
 * The list index's query alone, in this process, once every tree the workload needs is built:
 * CPU per query (process.cpuUsage, best of 8 passes over 3000 URLs of bench/list-workload.ts),
 * then per kind of filter and order. Unlike bench/list-index.ts, whose figure includes the first
 * use of each filter value's trees, this is what a page walk and its total cost from then on.
 * Run it in turns in two checkouts to compare them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PortfolioRecord } from '../shared';
import { PortfolioIndex } from '../server/storage/embedded/portfolio-index';
import { type ListRequest } from '../server/repositories/portfolio-repository-contract';
import { Store } from '../server/storage/embedded/store';
import { listRequestOf, listWorkload } from './list-workload';
import { makePortfolios, putRecords } from './seed';

const size = Number(process.argv[2] ?? 10000);
// Through JSON, as the store's own records are (flat strings, not the seed's concatenations).
const records = JSON.parse(JSON.stringify(makePortfolios(size))) as PortfolioRecord[];
const dir = await mkdtemp(join(tmpdir(), 'list-query-cpu-'));
const store = await Store.open({ dataDir: dir, compactMinBytes: Number.MAX_SAFE_INTEGER });

/** The least CPU µs per query of `passes` passes over `requests`. */
function cpuPerQuery(index: PortfolioIndex, requests: ListRequest[], passes: number): number {
  let least = Infinity;
  for (let pass = 0; pass < passes; pass++) {
    const started = process.cpuUsage();
    for (const request of requests) index.query(request);
    const used = process.cpuUsage(started);
    least = Math.min(least, (used.user + used.system) / requests.length);
  }
  return least;
}

try {
  await putRecords(store, records);
  const index = new PortfolioIndex(store.collection<PortfolioRecord>('portfolios'), store);
  const workload = listWorkload(records);
  const requests = Array.from({ length: 3000 }, () => listRequestOf(workload.list().path));
  for (const request of requests) index.query(request); // builds the trees
  console.log(`${size}: list, every URL new: ${cpuPerQuery(index, requests, 8).toFixed(1)} µs`);
  const kinds = new Map<string, ListRequest[]>();
  for (const request of requests) {
    const filter = [...request.filter]
      .map(([key, values]) => (key === 'staffPick' ? `${key}:${values[0]}` : key))
      .join('+');
    const kind = `${filter} ${request.orderKey}`;
    kinds.set(kind, [...(kinds.get(kind) ?? []), request]);
  }
  for (const [kind, some] of [...kinds].sort(([a], [b]) => (a < b ? -1 : 1)))
    console.log(`  ${kind.padEnd(50)} ${cpuPerQuery(index, some, 5).toFixed(1)} µs`);
} finally {
  await store.close();
  await rm(dir, { recursive: true, force: true });
}
