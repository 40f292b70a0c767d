import type pg from 'pg';
import { Lru } from '../../lib/lru';

/**
 * How many statements each connection keeps prepared at most. The list's texts vary only by the
 * shape of a request (order, filter keys and how many values, fields, a cursor or none), never by
 * its values, so a workload has a few dozen; the bound keeps varied URLs from growing the
 * database's memory (each prepared statement holds its parse tree and plans in its backend).
 */
const MAX_PREPARED_PER_CONNECTION = 200;

/** node-pg's record of the statements a connection has prepared, by name (see forget). */
interface PreparingClient {
  connection: { parsedStatements: Record<string, string> };
}

/**
 * Runs statements as named prepared statements on pooled connections, so the database parses
 * each text once per connection and, once it judges a generic plan as good as the custom ones,
 * stops planning it (planning was about half of a list's time in the database). Each connection
 * keeps its texts in an LRU; the one forgotten is deallocated.
 */
export class PreparedStatements {
  private readonly prepared = new WeakMap<pg.PoolClient, ConnectionStatements>();
  private count = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly limit = MAX_PREPARED_PER_CONNECTION,
  ) {}

  async query<R extends pg.QueryResultRow>(
    text: string,
    values: unknown[],
  ): Promise<pg.QueryResult<R>> {
    const client = await this.pool.connect();
    let failed: Error | undefined;
    try {
      const prepared = this.prepared.get(client) ?? this.track(client);
      let name = prepared.names.use(text);
      if (name === undefined) {
        name = `pm_${++this.count}`;
        prepared.names.put(text, name);
        for (const old of prepared.forgotten.splice(0)) await forget(client, old);
      }
      return await client.query<R>({ name, text, values });
    } catch (error) {
      failed = error as Error;
      throw error;
    } finally {
      // As pool.query does: a connection whose statement failed is closed, not reused (it may be
      // broken, and its record of what it prepared may then be wrong).
      client.release(failed);
    }
  }

  private track(client: pg.PoolClient): ConnectionStatements {
    const forgotten: string[] = [];
    const names = new Lru<string>(this.limit, (_text, name) => forgotten.push(name));
    const prepared = { names, forgotten };
    this.prepared.set(client, prepared);
    return prepared;
  }
}

/** A connection's statement names by text, and those forgotten but not yet deallocated. */
interface ConnectionStatements {
  names: Lru<string>;
  forgotten: string[];
}

/**
 * Deallocates a statement and drops it from node-pg's record of the connection's prepared ones
 * (which has no public way to forget one): else a later statement of that name would be sent
 * unprepared as already prepared.
 */
async function forget(client: pg.PoolClient, name: string): Promise<void> {
  delete (client as unknown as PreparingClient).connection.parsedStatements[name];
  await client.query(`DEALLOCATE ${name}`);
}
