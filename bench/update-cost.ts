/**
 * npx tsx bench/update-cost.ts [--size N] [--updates N]   (node --cpu-prof works too)
 *
 * The CPU of one update (issue 14) in this process, through the whole write path below HTTP:
 * PortfolioService.update → EmbeddedPortfolioRepository → Store (journal line, change events) →
 * the list index (trees of every order and filter value in use, counts, word index). The index
 * is first warmed by the 95/5 workload of bench/list-workload.ts and its word index built, as a
 * server's is after its first seconds. Updates go 20 at a time (as 20 connections send them),
 * so they share journal writes; the figure is process CPU (process.cpuUsage) per update.
 */
import { PageTokens } from '../server/domain/page-token';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PortfolioService, type Caller } from '../server/services/portfolio-service';
import { EmbeddedPortfolioRepository } from '../server/storage/embedded/embedded-portfolio-repository';
import { Store } from '../server/storage/embedded/store';
import { listRequestOf, listWorkload } from './list-workload';
import { makePortfolios, seedDataDir } from './seed';

const { values: args } = parseArgs({
  options: {
    size: { type: 'string', default: '100000' },
    updates: { type: 'string', default: '4000' },
    rounds: { type: 'string', default: '2' },
  },
});
const size = Number(args.size);
const UPDATES = Number(args.updates);
const CONNECTIONS = 20;

const records = makePortfolios(size);
const dir = await mkdtemp(join(tmpdir(), 'update-cost-'));
await seedDataDir(dir, records);
const store = await Store.open({ dataDir: dir });
try {
  const repository = await EmbeddedPortfolioRepository.open(store);
  repository.prepareListIndex();
  const service = new PortfolioService({
    repository,
    blobs: { adopt: async () => () => {}, collect: () => {}, discard: async () => {} },
    limits: { filesPerList: 20 },
    pageTokens: PageTokens.withSecret(PageTokens.newSecret()),
  });
  const admin: Caller = { username: 'bench', role: 'admin', allowEdit: ['*'] };
  const workload = listWorkload(records);

  const list = async (path: string) => {
    await repository.query(listRequestOf(path));
  };
  // Warm-up: every order and filter value's trees, some counts and searches, the word index.
  for (let count = 0; count < 2000; count++) await list(workload.list().path);
  for (let count = 0; count < 300; count++) await list(workload.search().path);
  // The word index is built in the background after start: wait until it is done.
  const search = (repository as unknown as { index: { search: { pending: unknown } } }).index
    .search;
  while (search.pending !== null) await new Promise((resolve) => setImmediate(resolve));

  const update = (path: string, body: string) =>
    service.update(admin, path.split('/').at(-1)!, JSON.parse(body));
  for (let round = 1; round <= Number(args.rounds); round++) {
    await store.idle();
    const started = process.cpuUsage();
    const wall = performance.now();
    // For reading a --cpu-prof profile of just this round (its clock is the monotonic one, in µs).
    if (process.env.UPDATE_COST_MARKS) console.log(`mark start ${process.hrtime.bigint() / 1000n}`);
    for (let done = 0; done < UPDATES; done += CONNECTIONS) {
      const batch = Array.from({ length: CONNECTIONS }, () => workload.update());
      await Promise.all(batch.map((request) => update(request.path, request.body!)));
    }
    const used = process.cpuUsage(started);
    if (process.env.UPDATE_COST_MARKS) console.log(`mark end ${process.hrtime.bigint() / 1000n}`);
    const cpuMs = (used.user + used.system) / 1000;
    console.log(
      `${size} portfolios, round ${round}: ${UPDATES} updates, ` +
        `${((cpuMs * 1000) / UPDATES).toFixed(0)} µs CPU per update ` +
        `(user ${(used.user / UPDATES).toFixed(0)} µs, system ${(used.system / UPDATES).toFixed(0)} µs), ` +
        `${((performance.now() - wall) / UPDATES).toFixed(2)} ms wall per update`,
    );
  }
} finally {
  await store.close();
  await rm(dir, { recursive: true, force: true });
}
