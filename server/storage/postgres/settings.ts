import type pg from 'pg';

/**
 * The instance-wide setting `key` (e.g. the page-token secret), made by `create` on first use.
 * Every instance answers the same value: when several start together, the first insert wins and
 * the others read what it stored.
 */
export async function sharedSetting<T>(pool: pg.Pool, key: string, create: () => T): Promise<T> {
  await pool.query(
    'INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING',
    [key, JSON.stringify(create())],
  );
  const { rows } = await pool.query<{ value: T }>('SELECT value FROM settings WHERE key = $1', [
    key,
  ]);
  return rows[0]!.value;
}
