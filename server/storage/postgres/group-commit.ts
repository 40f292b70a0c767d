import type pg from 'pg';

type Work = (client: pg.PoolClient) => Promise<unknown>;

interface Pending {
  work: Work;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Changes per transaction at most. It bounds how long one group holds the library row, and
 * stays under the 64 subtransactions a backend tracks in shared memory: past that, every
 * snapshot taken meanwhile (all the readers') would have to look subtransactions up on disk.
 */
const MAX_GROUP = 50;

/**
 * The writing transactions of one instance, run one group at a time, in call order. Writers
 * pass the library row one at a time anyway (seq in commit order), so each commit would wait for
 * the previous one's WAL flush; instead, the changes that queued up meanwhile share one
 * transaction and one flush, each in its own savepoint, so one that fails (a conflict, a taken
 * id) leaves the others and gives back its seq. A change is acknowledged only when its group has
 * committed; when the group's transaction fails as a whole, every change of it fails.
 */
export class GroupCommit {
  private pending: Pending[] = [];
  private draining = false;

  constructor(private readonly pool: pg.Pool) {}

  run<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.draining) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    while (this.pending.length > 0) await this.commit(this.pending.splice(0, MAX_GROUP));
    this.draining = false;
  }

  private async commit(group: Pending[]): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      for (const item of group) item.reject(error);
      return;
    }
    const outcomes: Outcome[] = [];
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      // A group of one needs no savepoint: its failure rolls the whole transaction back.
      if (group.length === 1) outcomes.push(await attempt(client, group[0]!.work));
      else for (const item of group) outcomes.push(await inSavepoint(client, item.work));
      if (outcomes.some((outcome) => outcome.ok)) await client.query('COMMIT');
      else await client.query('ROLLBACK');
    } catch (error) {
      // A client whose rollback fails is in an unknown state: the pool must not hand it out again.
      await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      group.forEach((item, index) => {
        const outcome = outcomes[index];
        item.reject(outcome && !outcome.ok ? outcome.error : error);
      });
      return;
    } finally {
      client.release(broken);
    }
    group.forEach((item, index) => {
      const outcome = outcomes[index]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }
}

async function attempt(client: pg.PoolClient, work: Work): Promise<Outcome> {
  try {
    return { ok: true, value: await work(client) };
  } catch (error) {
    return { ok: false, error };
  }
}

/**
 * Runs `work` in a savepoint, undoing exactly its own changes when it fails. A savepoint that
 * succeeded is left open rather than released (one round trip less per change): the next one
 * nests in it, `ROLLBACK TO` names the newest of that name, and COMMIT ends them all.
 */
async function inSavepoint(client: pg.PoolClient, work: Work): Promise<Outcome> {
  await client.query('SAVEPOINT change');
  const outcome = await attempt(client, work);
  if (!outcome.ok) await client.query('ROLLBACK TO SAVEPOINT change');
  return outcome;
}
