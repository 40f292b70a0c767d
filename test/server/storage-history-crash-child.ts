/**
 * A real process for the history crash test (not a test file itself): random inserts, updates,
 * deletes and restores from a seed, several lanes at once, straight on the repository. Each
 * acknowledged change is printed as `ACK {"op","portfolioId","revision","seq"}` once its promise
 * resolved, i.e. once it is durable. Usage:
 * node --import tsx test/server/storage-history-crash-child.ts <dataDir> <seed> <compactMinBytes>
 */
import { EmbeddedPortfolioRepository } from '../../server/storage/embedded/embedded-portfolio-repository';
import { Store } from '../../server/storage/embedded/store';
import { portfolioRecord } from '../helpers/portfolio-record';

const [dataDir, seedText, compactMinBytes] = process.argv.slice(2);
if (!dataDir || !seedText || !compactMinBytes) throw new Error('usage: <dataDir> <seed> <bytes>');

const LANES = 6;

/** mulberry32: a small seeded PRNG, so a failing run can be replayed from its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const store = await Store.open({ dataDir, compactMinBytes: Number(compactMinBytes) });
const repository = await EmbeddedPortfolioRepository.open(store);
const meta = (command: string) => ({ by: 'crash', time: Date.now(), command, changedFields: [] });

// ~1 KB a record: the journal passes the snapshot threshold many times a run.
const newRecord = (portfolioId: string) =>
  portfolioRecord(portfolioId, { projectDetail: `${portfolioId} `.repeat(100) });

const ack = (op: string, portfolioId: string, revision: number, seq: number) =>
  process.stdout.write(`ACK ${JSON.stringify({ op, portfolioId, revision, seq })}\n`);

/** One lane owns the ids with its prefix, so its changes to one portfolio never race. */
async function lane(index: number, next: () => number): Promise<void> {
  const prefix = `s${seedText}l${index}n`;
  const live: string[] = [];
  const trashed: string[] = [];
  for (const id of store.collection('portfolios').keys())
    if (id.includes(`l${index}n`)) live.push(id);
  for (const id of store.collection('trash').keys())
    if (id.includes(`l${index}n`)) trashed.push(id);
  const pick = (list: string[]) => list.splice(Math.floor(next() * list.length), 1)[0]!;
  for (let step = 0; ; step++) {
    const roll = next();
    if (live.length === 0 || roll < 0.25) {
      const stored = await repository.insert(newRecord(`${prefix}${step}`), meta('create'));
      live.push(stored.portfolioId);
      ack('insert', stored.portfolioId, stored.revision, stored.seq);
    } else if (roll < 0.6) {
      const id = live[Math.floor(next() * live.length)]!;
      const current = (await repository.get(id))!;
      const edited = {
        ...current,
        projectTitle: `${id} at ${step}`,
        revision: current.revision + 1,
      };
      const stored = await repository.update(id, current.revision, edited, meta('save'));
      ack('update', id, stored.revision, stored.seq);
    } else if (roll < 0.8 || trashed.length === 0) {
      const id = pick(live);
      const revision = (await repository.get(id))!.revision;
      const entry = await repository.delete(id, revision, meta('delete'));
      trashed.push(id);
      ack('delete', id, entry.revision, entry.seq);
    } else {
      const id = pick(trashed);
      const entry = (await repository.getTrashed(id))!;
      const restored = { ...entry.snapshot, revision: entry.revision + 1 };
      const stored = await repository.restoreFromTrash(id, restored, meta('undelete'));
      live.push(id);
      ack('restore', id, stored.revision, stored.seq);
    }
  }
}

const seed = Number(seedText);
console.log('READY');
await Promise.all(
  Array.from({ length: LANES }, (_, index) => lane(index, random(seed * 31 + index))),
);
