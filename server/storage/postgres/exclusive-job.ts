import type pg from 'pg';

/**
 * Runs `job` only if no other instance on the database is running it (a session advisory lock,
 * `pg_try_advisory_lock`, held on one connection for the job's length); answers undefined when
 * another instance holds it, so each pass of a periodic job runs on one instance at a time.
 * The lock goes with its connection, so an instance that dies mid-job frees it.
 */
export async function runExclusive<T>(
  pool: pg.Pool,
  lock: number,
  job: () => Promise<T>,
): Promise<T | undefined> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    const { rows } = await client.query<{ locked: boolean }>(
      'SELECT pg_try_advisory_lock($1) AS locked',
      [lock],
    );
    if (!rows[0]!.locked) return undefined;
    try {
      return await job();
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [lock]).catch((error: Error) => {
        broken = error; // a connection that may still hold the lock must not go back to the pool
      });
    }
  } catch (error) {
    broken ??= error as Error;
    throw error;
  } finally {
    client.release(broken);
  }
}
