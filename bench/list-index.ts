/**
 * npx tsx bench/list-index.ts [sizes...]   (default: 10000 100000)
 *
 * The list index alone, in this process, over the workload of bench/list-workload.ts: CPU time per
 * query (process.cpuUsage, so a machine busy with other work inflates it far less than it does
 * wall-clock rates) for lists with every URL new, 95/5 lists and updates, and searches; the first
 * query of each kind; and the heap once every kind has been asked. What it shows is how the cost
 * of a query changes with the collection, without HTTP in the way; bench/run.ts measures the
 * server as users run it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PortfolioRecord } from '../shared';
import { PortfolioIndex } from '../server/storage/embedded/portfolio-index';
import { Store } from '../server/storage/embedded/store';
import { listRequestOf, listWorkload, type Request } from './list-workload';
import { makePortfolios, putRecords } from './seed';

const QUERIES = 3000;

function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

async function measure(size: number) {
  const records = makePortfolios(size);
  const dir = await mkdtemp(join(tmpdir(), 'list-index-bench-'));
  const store = await Store.open({ dataDir: dir, compactMinBytes: Number.MAX_SAFE_INTEGER });
  try {
    await putRecords(store, records);
    const index = new PortfolioIndex(store.collection<PortfolioRecord>('portfolios'), store);
    const workload = listWorkload(records);
    const writes: Array<Promise<void>> = [];

    const ask = (request: Request) => {
      if (request.method === 'PUT') {
        const id = request.path.split('/').at(-1)!;
        const current = store.get<PortfolioRecord>('portfolios', id)!;
        const body = JSON.parse(request.body!) as { projectTitle: string };
        const value = { ...current, projectTitle: body.projectTitle, modifiedTime: Date.now() };
        writes.push(store.commit([{ type: 'put', col: 'portfolios', key: id, value }]));
        return;
      }
      index.query(listRequestOf(request.path));
    };
    const first = (request: Request) => {
      const started = process.cpuUsage();
      ask(request);
      return Number(cpuMs(started).toFixed(1));
    };
    const perQuery = (next: () => Request) => {
      const started = process.cpuUsage();
      for (let count = 0; count < QUERIES; count++) ask(next());
      return Number(((cpuMs(started) * 1000) / QUERIES).toFixed(0));
    };

    const firsts = {
      firstList: first(workload.list()),
      firstSearch: first(workload.search()),
    };
    // Every order and filter key once, as a server would see in its first seconds.
    for (let count = 0; count < 200; count++) ask(workload.list());
    const listUs = perQuery(workload.list);
    const mixedUs = perQuery(workload.mixed);
    const searchUs = perQuery(workload.search);
    await Promise.all(writes);
    globalThis.gc?.();
    const heapMb = Number((process.memoryUsage().heapUsed / 1e6).toFixed(0));
    return { size, ...firsts, listUs, mixedUs, searchUs, heapMb };
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const sizes = process.argv.slice(2).map(Number);
for (const size of sizes.length > 0 ? sizes : [10000, 100000]) {
  const result = await measure(size);
  console.log(
    `${size}: first list ${result.firstList} ms CPU, first search ${result.firstSearch} ms CPU; ` +
      `per query: list ${result.listUs} µs, 95/5 ${result.mixedUs} µs, search ${result.searchUs} µs; ` +
      `heap ${result.heapMb} MB`,
  );
}
