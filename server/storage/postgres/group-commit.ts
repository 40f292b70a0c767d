import type pg from 'pg';

type Work = (client: pg.PoolClient) => Promise<unknown>;

interface Pending {
  work: Work;
  /** The work's failure leaves nothing changed: it needs no savepoint of its own. */
  atomic: boolean;
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

  /**
   * Runs `work` in the next group. `atomic`: the work is one statement, or fails before it
   * writes, so its failure changes nothing and it runs without a savepoint (one round trip
   * less). Should its statement fail in the database after all (which aborts the transaction),
   * the group is rolled back and run again with a savepoint for every change.
   */
  run<T>(work: (client: pg.PoolClient) => Promise<T>, atomic = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ work, atomic, resolve: resolve as (value: unknown) => void, reject });
      if (!this.draining) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    while (this.pending.length > 0) await this.commit(this.pending.splice(0, MAX_GROUP));
    this.draining = false;
  }

  private async commit(group: Pending[], savepointEach = false): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      for (const item of group) item.reject(error);
      return;
    }
    const outcomes: Outcome[] = [];
    let broken: Error | undefined;
    let released = false;
    try {
      await client.query('BEGIN');
      // A group of one needs no savepoint: its failure rolls the whole transaction back (an
      // atomic change that failed in the database is given its second run all the same).
      if (group.length === 1 && !savepointEach) {
        const outcome = await attempt(client, group[0]!.work);
        if (!outcome.ok && group[0]!.atomic && isDatabaseError(outcome.error))
          throw new GroupAborted();
        outcomes.push(outcome);
      } else
        for (const item of group) {
          if (savepointEach || !item.atomic) {
            outcomes.push(await inSavepoint(client, item.work));
            continue;
          }
          const outcome = await attempt(client, item.work);
          if (!outcome.ok && isDatabaseError(outcome.error)) throw new GroupAborted();
          outcomes.push(outcome);
        }
      if (outcomes.some((outcome) => outcome.ok)) await client.query('COMMIT');
      else await client.query('ROLLBACK');
    } catch (error) {
      // A client whose rollback fails is in an unknown state: the pool must not hand it out again.
      await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      if (error instanceof GroupAborted && !broken) {
        client.release();
        released = true;
        return this.commit(group, true);
      }
      group.forEach((item, index) => {
        const outcome = outcomes[index];
        item.reject(outcome && !outcome.ok ? outcome.error : error);
      });
      return;
    } finally {
      if (!released) client.release(broken);
    }
    group.forEach((item, index) => {
      const outcome = outcomes[index]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }
}

/** An atomic change failed in the database: the transaction is aborted, the group runs again. */
class GroupAborted extends Error {}

/** An error the database answered (a SQLSTATE), or one caused by such: it aborted the transaction. */
function isDatabaseError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return true;
  return error.cause !== undefined && isDatabaseError(error.cause);
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
