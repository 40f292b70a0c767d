import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type pg from 'pg';

type IncrCallback = Parameters<FastifyRateLimitStore['incr']>[1];
type RouteOptions = Parameters<FastifyRateLimitStore['child']>[0];

/**
 * A store for @fastify/rate-limit over the `rate_limits` table, so every instance on the
 * database counts the same requests: one fixed window per key (route and address), counted by
 * one upsert, atomic across instances. Expired rows are rewritten in place by the next request
 * of their key, and deleted by `pruneRateLimits` (the session sweep).
 */
export function pgRateLimitStore(pool: pg.Pool): FastifyRateLimitStoreCtor {
  class PgRateLimitStore implements FastifyRateLimitStore {
    constructor(
      _options: unknown,
      private readonly prefix = '',
    ) {}

    incr(key: string, callback: IncrCallback, timeWindow?: number, _max?: number): void {
      const windowMs = timeWindow ?? 60_000;
      pool
        .query<{ hits: number; ttl: number }>(
          `INSERT INTO rate_limits AS r (key, hits, reset_at) VALUES ($1, 1, $2::bigint + $3::bigint)
           ON CONFLICT (key) DO UPDATE SET
             hits = CASE WHEN r.reset_at <= $2::bigint THEN 1 ELSE r.hits + 1 END,
             reset_at = CASE WHEN r.reset_at <= $2::bigint THEN $2::bigint + $3::bigint
               ELSE r.reset_at END
           RETURNING hits, reset_at - $2::bigint AS ttl`,
          [this.prefix + key, Date.now(), windowMs],
        )
        .then(
          ({ rows }) => callback(null, { current: rows[0]!.hits, ttl: rows[0]!.ttl }),
          (error: Error) => callback(error),
        );
    }

    child(routeOptions: RouteOptions): FastifyRateLimitStore {
      const route = (routeOptions as { routeInfo?: { method?: string; url?: string } }).routeInfo;
      return new PgRateLimitStore(routeOptions, `${route?.method ?? ''}${route?.url ?? ''}|`);
    }
  }
  return PgRateLimitStore as unknown as FastifyRateLimitStoreCtor;
}

/** Deletes the counters whose window is over. */
export async function pruneRateLimits(pool: pg.Pool, now = Date.now()): Promise<number> {
  const { rowCount } = await pool.query('DELETE FROM rate_limits WHERE reset_at <= $1::bigint', [
    now,
  ]);
  return rowCount ?? 0;
}
