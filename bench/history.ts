/**
 * History bench (issue 13): the write path with history on and off, in one run.
 *
 *   npx tsx bench/history.ts --size 10000          # 1000 | 10000 | 100000 portfolios
 *   npx tsx bench/history.ts --size 100000 --bound-rounds 0 --slices 20
 *
 * For each size, on a fresh data directory per mode, straight on the repository (the storage
 * cost history adds, without HTTP around it):
 * - update and create throughput with history on and off: both libraries open, measured in
 *   alternating slices (median of each), `CLIENTS` concurrent writers doing get → edit →
 *   compare-and-set (updates) or insert (creates);
 * - bytes the data directory grows per 1,000 updates (journal only: snapshots held back), and
 *   heap retained per update (after GC);
 * - boundedness: rounds that update every portfolio once, each followed by a retention pass
 *   (keepNewest = KEEP_NEWEST, nothing recent enough to keep beyond it) and a snapshot: the
 *   revision count and the data directory stop growing once every portfolio has KEEP_NEWEST.
 * Writes bench/results/<date>-history-<size>.json.
 */
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { PortfolioRecord } from '../shared';
import { EmbeddedPortfolioRepository } from '../server/storage/embedded/embedded-portfolio-repository';
import { Store } from '../server/storage/embedded/store';
import { makePortfolios, seedDataDir } from './seed';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RESULTS_DIR = join(ROOT, 'bench', 'results');
const CLIENTS = 10;
const KEEP_NEWEST = 5;
const DAY = 86_400_000;

const { values: args } = parseArgs({
  options: {
    size: { type: 'string', default: '10000' },
    updates: { type: 'string', default: '5000' },
    creates: { type: 'string', default: '2000' },
    'bound-rounds': { type: 'string', default: '8' },
    /** Alternating measurement slices per mode. */
    slices: { type: 'string', default: '10' },
  },
});
const SIZE = Number(args.size);
const UPDATES = Number(args.updates);
const CREATES = Number(args.creates);
const BOUND_ROUNDS = Number(args['bound-rounds']);
const SLICES = Number(args.slices);
if (![1000, 10000, 100000].includes(SIZE)) throw new Error('--size must be 1000, 10000 or 100000');

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

interface Library {
  dir: string;
  store: Store;
  repository: EmbeddedPortfolioRepository;
}

async function openLibrary(dir: string, history: boolean, compactMinBytes?: number) {
  const store = await Store.open({ dataDir: dir, ...(compactMinBytes ? { compactMinBytes } : {}) });
  return { dir, store, repository: await EmbeddedPortfolioRepository.open(store, { history }) };
}

async function freshLibrary(history: boolean, records: PortfolioRecord[]): Promise<Library> {
  const dir = await mkdtemp(join(tmpdir(), `history-bench-${history ? 'on' : 'off'}-`));
  await seedDataDir(dir, records);
  return openLibrary(dir, history);
}

async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;

async function dataDirSizes(dir: string) {
  const sizeOf = (name: string) => stat(join(dir, name)).then((info) => info.size);
  const names = await readdir(dir);
  const journal = names.filter((name) => name.startsWith('journal-'));
  const journalBytes = (await Promise.all(journal.map(sizeOf))).reduce((a, b) => a + b, 0);
  return {
    dataDirBytes: await dirBytes(dir),
    snapshotBytes: await sizeOf('db.json'),
    journalBytes,
  };
}

const meta = (command: string) => ({ by: 'bench', time: Date.now(), command, changedFields: [] });

interface Sample {
  /** Operations per second (wall clock: mostly the disk's fdatasync). */
  rate: number;
  /** The process's CPU time per operation, in µs (user + system, GC included). */
  cpuMicros: number;
}

async function timed(count: number, work: () => Promise<unknown>): Promise<Sample> {
  const start = performance.now();
  const cpu = process.cpuUsage();
  await work();
  const used = process.cpuUsage(cpu);
  return {
    rate: count / ((performance.now() - start) / 1000),
    cpuMicros: (used.user + used.system) / count,
  };
}

/** `count` updates by CLIENTS concurrent writers over portfolios picked in a fixed stride. */
async function updates(library: Library, ids: string[], count: number, offset = 0) {
  let next = 0;
  const writer = async () => {
    for (let n = next++; n < count; n = next++) {
      const id = ids[(offset + n * 7919) % ids.length]!;
      const current = (await library.repository.get(id))!;
      const edited = {
        ...current,
        projectTitle: `${current.projectTitle.split(' #')[0]} #${n}`,
        modifiedTime: Date.now(),
        revision: current.revision + 1,
      };
      await library.repository.update(id, current.revision, edited, meta('save'));
    }
  };
  return timed(count, () => Promise.all(Array.from({ length: CLIENTS }, writer)));
}

async function creates(library: Library, template: PortfolioRecord, count: number, tag: string) {
  let next = 0;
  const writer = async () => {
    for (let n = next++; n < count; n = next++) {
      const portfolioId = `new-${tag}-${n}`;
      await library.repository.insert({ ...template, portfolioId }, meta('create'));
    }
  };
  return timed(count, () => Promise.all(Array.from({ length: CLIENTS }, writer)));
}

/**
 * Both libraries are open at once and measured in alternating slices (the order flipped every
 * slice), so that both modes see the same moments of a shared machine's disk; the median slice
 * counts.
 */
async function throughput(records: PortfolioRecord[]) {
  const ids = records.map((record) => record.portfolioId);
  const libraries = {
    off: await freshLibrary(false, records),
    on: await freshLibrary(true, records),
  };
  const samples = {
    off: { update: [] as Sample[], create: [] as Sample[] },
    on: { update: [] as Sample[], create: [] as Sample[] },
  };
  try {
    for (const library of Object.values(libraries)) await updates(library, ids, 500); // warm-up
    for (let slice = 0; slice < SLICES; slice++) {
      const order = slice % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
      for (const mode of order) {
        const offset = 500 + slice * (UPDATES / SLICES);
        samples[mode].update.push(await updates(libraries[mode], ids, UPDATES / SLICES, offset));
      }
      for (const mode of order) {
        samples[mode].create.push(
          await creates(libraries[mode], records[0]!, CREATES / SLICES, `${slice}`),
        );
      }
    }
  } finally {
    for (const library of Object.values(libraries)) {
      await library.store.close();
      await rm(library.dir, { recursive: true, force: true });
    }
  }
  const summary = (list: Sample[]) => ({
    rate: median(list.map((sample) => sample.rate)),
    cpuMicros: median(list.map((sample) => sample.cpuMicros)),
  });
  const result = {
    off: { update: summary(samples.off.update), create: summary(samples.off.create) },
    on: { update: summary(samples.on.update), create: summary(samples.on.create) },
  };
  for (const mode of ['off', 'on'] as const) {
    const { update, create } = result[mode];
    console.log(
      `  history ${mode}: ${update.rate.toFixed(0)} updates/s (${update.cpuMicros.toFixed(0)} µs CPU each), ` +
        `${create.rate.toFixed(0)} creates/s (${create.cpuMicros.toFixed(0)} µs CPU each); ` +
        `update slices: ${samples[mode].update.map((sample) => sample.rate.toFixed(0)).join(' ')}`,
    );
  }
  return { ...result, samples };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Journal bytes and retained heap per update, snapshots held back so the journal only grows. */
async function growth(records: PortfolioRecord[]) {
  const ids = records.map((record) => record.portfolioId);
  const result: Record<string, { bytesPer1000Updates: number; heapBytesPerUpdate: number }> = {};
  for (const mode of ['off', 'on'] as const) {
    const seeded = await freshLibrary(mode === 'on', records);
    await seeded.store.close();
    const library = await openLibrary(seeded.dir, mode === 'on', Number.MAX_SAFE_INTEGER);
    try {
      await updates(library, ids, 1000); // every portfolio past its seeded revision
      await library.store.idle();
      gc();
      const heapBefore = process.memoryUsage().heapUsed;
      const bytesBefore = await dirBytes(library.dir);
      await updates(library, ids, 5000, 1000);
      await library.store.idle();
      gc();
      const heapAfter = process.memoryUsage().heapUsed;
      const bytesAfter = await dirBytes(library.dir);
      result[mode] = {
        bytesPer1000Updates: Math.round((bytesAfter - bytesBefore) / 5),
        heapBytesPerUpdate: Math.round((heapAfter - heapBefore) / 5000),
      };
      console.log(
        `  history ${mode}: +${(result[mode].bytesPer1000Updates / 1024).toFixed(0)} KB per 1000 updates, ` +
          `+${result[mode].heapBytesPerUpdate} B heap per update`,
      );
    } finally {
      await library.store.close();
      await rm(library.dir, { recursive: true, force: true });
    }
  }
  return result;
}

/** Rounds of one update per portfolio, each followed by retention and a snapshot. */
async function bounded(records: PortfolioRecord[]) {
  const ids = records.map((record) => record.portfolioId);
  const library = await freshLibrary(true, records);
  const rounds: { round: number; revisions: number; dataDirBytes: number; dropped: number }[] = [];
  try {
    for (let round = 1; round <= BOUND_ROUNDS; round++) {
      let next = 0;
      await Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          for (let n = next++; n < ids.length; n = next++) {
            const id = ids[n]!;
            const current = (await library.repository.get(id))!;
            const edited = { ...current, revision: current.revision + 1 };
            await library.repository.update(id, current.revision, edited, meta('save'));
          }
        }),
      );
      // As if every revision were older than the retention days: only KEEP_NEWEST stay.
      const dropped = await library.repository.pruneRevisions({
        keepSince: Date.now() + DAY,
        keepNewest: KEEP_NEWEST,
      });
      await library.store.compactNow();
      const revisions = library.store.collection('revisions').size;
      const sizes = await dataDirSizes(library.dir);
      rounds.push({ round, revisions, dropped, ...sizes });
      console.log(
        `  round ${round}: ${revisions} revisions kept (${dropped} dropped); db.json ${mb(sizes.snapshotBytes)}, ` +
          `journal ${mb(sizes.journalBytes)}, whole data dir ${mb(sizes.dataDirBytes)} (with older generations)`,
      );
    }
  } finally {
    await library.store.close();
    await rm(library.dir, { recursive: true, force: true });
  }
  return rounds;
}

const records = makePortfolios(SIZE);
console.log(`History bench, ${SIZE} portfolios, ${CLIENTS} concurrent writers`);
console.log(`Throughput (median of ${SLICES} alternating slices per mode):`);
const best = await throughput(records);
const ratios = {
  update: best.on.update.rate / best.off.update.rate,
  create: best.on.create.rate / best.off.create.rate,
  updateCpu: best.on.update.cpuMicros / best.off.update.cpuMicros,
  createCpu: best.on.create.cpuMicros / best.off.create.cpuMicros,
};
console.log(
  `  with/without history: update ${ratios.update.toFixed(2)}×, create ${ratios.create.toFixed(2)}× (target ≥ 0.8×); ` +
    `CPU per update ${ratios.updateCpu.toFixed(2)}×, per create ${ratios.createCpu.toFixed(2)}×`,
);
console.log('Growth per update (journal only, snapshots held back):');
const perUpdate = await growth(records);
console.log(`Boundedness (keepNewest ${KEEP_NEWEST}, retention and a snapshot after each round):`);
const rounds = BOUND_ROUNDS > 0 ? await bounded(records) : [];

await mkdir(RESULTS_DIR, { recursive: true });
const file = join(RESULTS_DIR, `${new Date().toISOString().slice(0, 10)}-history-${SIZE}.json`);
await writeFile(
  file,
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, node: process.version },
      settings: {
        size: SIZE,
        clients: CLIENTS,
        updates: UPDATES,
        creates: CREATES,
        slices: SLICES,
      },
      throughput: best,
      ratios,
      perUpdate,
      bounded: { keepNewest: KEEP_NEWEST, rounds },
      targets: { historyRatioAtLeast: 0.8, met: ratios.update >= 0.8 && ratios.create >= 0.8 },
    },
    null,
    2,
  )}\n`,
);
console.log(`Wrote ${file}`);
