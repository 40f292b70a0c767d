import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { EmbeddedPortfolioRepository } from '../../server/storage/embedded/embedded-portfolio-repository';
import { Store } from '../../server/storage/embedded/store';
import { makeTempDir } from '../helpers/test-server';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const COMPACT_MIN_BYTES = 16 * 1024;
/** Each cycle's child runs from its own seed and is killed after a seeded number of acks. */
const SEEDS = [11, 23, 37, 41];

interface Ack {
  op: 'insert' | 'update' | 'delete' | 'restore';
  portfolioId: string;
  revision: number;
  seq: number;
}

/** Runs a child until it has acknowledged `acks` changes, then kills it with SIGKILL. */
function runAndKill(dataDir: string, seed: number, acks: number, children: ChildProcess[]) {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'test/server/storage-history-crash-child.ts',
      dataDir,
      String(seed),
      String(COMPACT_MIN_BYTES),
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  const acknowledged: Ack[] = [];
  let output = '';
  let errors = '';
  child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  return new Promise<Ack[]>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const lines = output.split('\n');
      output = lines.pop()!;
      for (const line of lines) {
        if (!line.startsWith('ACK ')) continue;
        acknowledged.push(JSON.parse(line.slice(4)) as Ack);
        if (acknowledged.length === acks) child.kill('SIGKILL');
      }
    });
    child.once('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(acknowledged);
      else reject(new Error(`child exited (${code}) before the kill:\n${errors}`));
    });
  });
}

/** Every acknowledged change is there with its seq; the feed is whole and strictly ordered. */
async function verify(dataDir: string, acknowledged: Ack[]): Promise<number> {
  const store = await Store.open({ dataDir }); // takes over the dead child's lock
  try {
    const repository = await EmbeddedPortfolioRepository.open(store);
    const latestSeq = new Map<string, number>();
    let since = 0;
    for (let hasMore = true; hasMore;) {
      const page = await repository.changesSince(since, 50);
      for (const change of page.changes) {
        expect(change.seq).toBeGreaterThan(since); // strictly increasing, across pages too
        since = change.seq;
        expect(latestSeq.has(change.portfolioId)).toBe(false); // collapsed: once per portfolio
        latestSeq.set(change.portfolioId, change.seq);
        if (!change.deleted)
          expect(change.portfolio).toBe(await repository.get(change.portfolioId));
      }
      since = page.next;
      hasMore = page.hasMore;
    }
    expect(latestSeq.size).toBe(
      store.collection('portfolios').size + store.collection('trash').size,
    );
    for (const change of acknowledged) {
      // The portfolio's latest change is this one or a later one: nothing acknowledged is lost,
      // and no later change got a seq at or below an acknowledged one.
      expect(latestSeq.get(change.portfolioId)).toBeGreaterThanOrEqual(change.seq);
      if (change.op === 'delete') {
        const trashed = await repository.getTrashed(change.portfolioId);
        const live = await repository.get(change.portfolioId);
        // In the trash from this delete or a later one, or brought back since.
        expect(Math.max(trashed?.seq ?? 0, live?.seq ?? 0)).toBeGreaterThanOrEqual(change.seq);
      } else {
        const revision = await repository.revision(change.portfolioId, change.revision);
        expect(revision?.seq, `${change.op} ${change.portfolioId}`).toBe(change.seq);
        expect(revision?.snapshot.revision).toBe(change.revision);
      }
    }
    // Seqs are unique across the whole history (none reused after a crash).
    const seqs = [...store.collection<{ seq: number }>('revisions').values()].map((r) => r.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
    return since;
  } finally {
    await store.close();
  }
}

describe('crash safety of the change sequence: kill -9 during deletes, restores and updates', () => {
  const children: ChildProcess[] = [];
  let dataDir = '';
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps every acknowledged change with its seq, and the feed skips nothing', async () => {
    dataDir = await makeTempDir('portfolio-seq-crash-');
    const acknowledged: Ack[] = [];
    const segments = new Set<string>();
    let lastSeq = 0;
    for (const seed of SEEDS) {
      // A seeded kill point: 80..280 acknowledged changes into the run.
      const acks = 80 + ((seed * 7919) % 200);
      const cycle = await runAndKill(dataDir, seed, acks, children);
      expect(cycle.length).toBeGreaterThanOrEqual(acks);
      // Changes after a restart continue the sequence: none at or below the last one seen.
      expect(Math.min(...cycle.map((change) => change.seq))).toBeGreaterThan(lastSeq);
      acknowledged.push(...cycle);
      for (const name of await readdir(dataDir))
        if (name.startsWith('journal-')) segments.add(name);
      lastSeq = await verify(dataDir, acknowledged);
      expect(lastSeq).toBeGreaterThanOrEqual(Math.max(...cycle.map((change) => change.seq)));
    }
    const ops = new Set(acknowledged.map((change) => change.op));
    expect([...ops].sort()).toEqual(['delete', 'insert', 'restore', 'update']);
    // Kills fell across journal segment switches and snapshots, not into one growing file.
    expect(segments.size).toBeGreaterThanOrEqual(3);
  }, 120_000);
});
