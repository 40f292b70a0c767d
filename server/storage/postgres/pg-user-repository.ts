import type pg from 'pg';
import { byUsername } from '../../repositories/user-repository';
import type {
  AttemptCount,
  SessionLookup,
  SessionRecord,
  UserRecord,
  UserRepository,
} from '../../repositories/user-repository-contract';

/**
 * Users, sessions and failed sign-ins in PostgreSQL, shared by every instance on the database.
 * Nothing is cached: each lookup is one indexed query, so a session ended or a user changed on
 * one instance counts on every other at once. Every change is one statement (atomic on its own).
 */
export class PgUserRepository implements UserRepository {
  constructor(private readonly pool: pg.Pool) {}

  async get(username: string): Promise<UserRecord | undefined> {
    const { rows } = await this.pool.query<{ record: UserRecord }>(
      'SELECT record FROM users WHERE username = $1',
      [username],
    );
    return rows[0]?.record;
  }

  async list(): Promise<UserRecord[]> {
    const { rows } = await this.pool.query<{ record: UserRecord }>('SELECT record FROM users');
    return rows.map((row) => row.record).sort(byUsername);
  }

  async count(): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM users');
    return rows[0]!.n;
  }

  async countAdmins(): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM users WHERE role = 'admin'",
    );
    return rows[0]!.n;
  }

  async insert(user: UserRecord): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `INSERT INTO users (username, role, record) VALUES ($1, $2, $3)
       ON CONFLICT (username) DO NOTHING`,
      [user.username, user.role, JSON.stringify(user)],
    );
    return rowCount === 1;
  }

  async update(user: UserRecord, options: { endSessions?: boolean } = {}): Promise<void> {
    await this.pool.query(
      `WITH changed AS (
         UPDATE users SET role = $2, record = $3 WHERE username = $1 RETURNING username
       )
       DELETE FROM sessions WHERE $4 AND username IN (SELECT username FROM changed)`,
      [user.username, user.role, JSON.stringify(user), options.endSessions === true],
    );
  }

  async delete(username: string): Promise<boolean> {
    // Its sessions go with it (ON DELETE CASCADE).
    const { rowCount } = await this.pool.query('DELETE FROM users WHERE username = $1', [username]);
    return rowCount === 1;
  }

  async findSession(hash: string): Promise<SessionLookup | undefined> {
    const { rows } = await this.pool.query<SessionRecord & { record: UserRecord }>(
      `SELECT s.username, s.created_date AS "createdDate", s.expired_date AS "expiredDate",
         s.last_seen AS "lastSeen", u.record
       FROM sessions s JOIN users u ON u.username = s.username WHERE s.id_hash = $1`,
      [hash],
    );
    const row = rows[0];
    if (!row) return undefined;
    const { record, ...session } = row;
    return { session, user: record };
  }

  async saveSession(hash: string, session: SessionRecord): Promise<void> {
    await this.pool.query(
      `INSERT INTO sessions (id_hash, username, created_date, expired_date, last_seen)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (id_hash) DO UPDATE SET expired_date = EXCLUDED.expired_date,
         last_seen = EXCLUDED.last_seen`,
      [hash, session.username, session.createdDate, session.expiredDate, session.lastSeen],
    );
  }

  async touchSession(hash: string, lastSeen: number): Promise<void> {
    await this.pool.query(
      'UPDATE sessions SET last_seen = $2 WHERE id_hash = $1 AND last_seen < $2',
      [hash, lastSeen],
    );
  }

  async deleteSessions(hashes: string[]): Promise<void> {
    if (hashes.length === 0) return;
    await this.pool.query('DELETE FROM sessions WHERE id_hash = ANY($1::text[])', [hashes]);
  }

  async deleteExpiredSessions(now: number, idleMs: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      'DELETE FROM sessions WHERE expired_date <= $1::bigint OR last_seen < $1::bigint - $2::bigint',
      [now, idleMs],
    );
    return rowCount ?? 0;
  }

  async attempts(key: string): Promise<AttemptCount | undefined> {
    const { rows } = await this.pool.query<AttemptCount>(
      `SELECT failures, window_start AS "windowStart", blocked_until AS "blockedUntil"
       FROM sign_in_attempts WHERE key = $1`,
      [key],
    );
    return rows[0];
  }

  async recordFailure(key: string, limit: number, windowMs: number, now: number): Promise<void> {
    // One statement: concurrent failures on several instances each count (the row lock orders
    // them). A window older than windowMs starts again at one.
    await this.pool.query(
      `INSERT INTO sign_in_attempts AS a (key, failures, window_start, blocked_until)
       VALUES ($1, 1, $4::bigint, CASE WHEN 1 >= $2::int THEN $4::bigint + $3::bigint ELSE 0 END)
       ON CONFLICT (key) DO UPDATE SET
         failures = CASE WHEN $4::bigint - a.window_start > $3::bigint THEN 1 ELSE a.failures + 1 END,
         window_start = CASE WHEN $4::bigint - a.window_start > $3::bigint THEN $4::bigint ELSE a.window_start END,
         blocked_until = CASE
           WHEN (CASE WHEN $4::bigint - a.window_start > $3::bigint THEN 1 ELSE a.failures + 1 END) >= $2::int
             THEN $4::bigint + $3::bigint
           WHEN $4::bigint - a.window_start > $3::bigint THEN 0
           ELSE a.blocked_until END`,
      [key, limit, windowMs, now],
    );
  }

  async clearAttempts(key: string): Promise<void> {
    await this.pool.query('DELETE FROM sign_in_attempts WHERE key = $1', [key]);
  }

  async pruneAttempts(now: number, windowMs: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      'DELETE FROM sign_in_attempts WHERE blocked_until < $1::bigint AND window_start < $1::bigint - $2::bigint',
      [now, windowMs],
    );
    return rowCount ?? 0;
  }
}
