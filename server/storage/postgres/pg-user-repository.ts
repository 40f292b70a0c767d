import type pg from 'pg';
import { byOwnerThenAge, byUsername } from '../embedded/embedded-user-repository';
import type {
  AttemptCount,
  CreateDeviceResult,
  DeviceRecord,
  SessionLookup,
  SessionRecord,
  UserRecord,
  UserRepository,
} from '../../repositories/user-repository-contract';
import { CHANGES_CHANNEL, MAX_HASHES_PER_NOTICE, type ChangeNotice } from './change-listener';
import type { SessionCache } from './session-cache';

/**
 * The tail of a statement whose CTE `ended` returns the `id_hash` of the sessions or devices it
 * ended: tells every instance (CHANGES_CHANNEL, on commit) and answers how many (`n`).
 */
const NOTIFY_ENDED = `SELECT count(*)::int AS n, CASE
    WHEN count(*) = 0 THEN NULL
    WHEN count(*) > ${MAX_HASHES_PER_NOTICE} THEN pg_notify('${CHANGES_CHANNEL}', '{"kind":"all-sessions"}')
    ELSE pg_notify('${CHANGES_CHANNEL}', json_build_object('kind', 'sessions', 'hashes', json_agg(id_hash))::text)
  END AS notified FROM ended`;

const userNotice = (username: string) =>
  JSON.stringify({ kind: 'user', username } satisfies ChangeNotice);

/**
 * Users, sessions and failed sign-ins in PostgreSQL, shared by every instance on the database.
 * Every change is one statement (atomic on its own). Device tokens live in `devices` (migration
 * 0003), found by the same lookup as sessions.
 *
 * With a SessionCache, `findSession` answers sessions found lately from memory. Every statement
 * that ends a session or device or changes a user also sends a notice on CHANGES_CHANNEL (in the
 * same statement, so only if it commits), which makes every instance's cache drop it; this
 * instance's own cache drops it before the change's promise resolves. Without a cache (tools, the
 * contract suite) every lookup is one indexed query.
 */
export class PgUserRepository implements UserRepository {
  private readonly cache: SessionCache | undefined;

  constructor(
    private readonly pool: pg.Pool,
    options: { cache?: SessionCache } = {},
  ) {
    this.cache = options.cache;
  }

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

  async update(
    user: UserRecord,
    options: { endSessions?: boolean; now?: number } = {},
  ): Promise<void> {
    // Any change of a user is noticed: sessions and devices cached elsewhere carry the user's
    // role and rights, and the notice drops every one of them there.
    await this.pool.query(
      `WITH changed AS (
         UPDATE users SET role = $2, record = $3 WHERE username = $1 RETURNING username
       ), ended AS (
         DELETE FROM sessions WHERE $4 AND username IN (SELECT username FROM changed)
       ), revoked AS (
         UPDATE devices SET revoked_time = $6
         WHERE $4 AND revoked_time IS NULL AND username IN (SELECT username FROM changed)
       )
       SELECT pg_notify('${CHANGES_CHANNEL}', $5) FROM changed`,
      [
        user.username,
        user.role,
        JSON.stringify(user),
        options.endSessions === true,
        userNotice(user.username),
        options.now ?? Date.now(),
      ],
    );
    this.cache?.dropUser(user.username);
  }

  async delete(username: string, now: number = Date.now()): Promise<boolean> {
    // Its sessions go with it (ON DELETE CASCADE); its devices are revoked in the same statement.
    const { rows } = await this.pool.query<{ deleted: boolean }>(
      `WITH gone AS (DELETE FROM users WHERE username = $1 RETURNING username),
         revoked AS (
           UPDATE devices SET revoked_time = $2
           WHERE revoked_time IS NULL AND username IN (SELECT username FROM gone)
         )
       SELECT count(pg_notify('${CHANGES_CHANNEL}', $3)) > 0 AS deleted FROM gone`,
      [username, now, userNotice(username)],
    );
    this.cache?.dropUser(username);
    return rows[0]!.deleted;
  }

  findSession(hash: string): SessionLookup | Promise<SessionLookup | undefined> {
    return this.cache?.get(hash) ?? this.readSession(hash);
  }

  private async readSession(hash: string): Promise<SessionLookup | undefined> {
    const ticket = this.cache?.ticket() ?? -1;
    // One query for both kinds: a token is a session or a live device, never both.
    const { rows } = await this.pool.query<
      SessionRecord & { record: UserRecord; kind: 'device' | null }
    >(
      `SELECT s.username, s.created_date AS "createdDate", s.expired_date AS "expiredDate",
         s.last_seen AS "lastSeen", NULL AS kind, NULL AS "deviceId", NULL AS name,
         NULL AS "replicaId", u.record
       FROM sessions s JOIN users u ON u.username = s.username WHERE s.id_hash = $1
       UNION ALL
       SELECT d.username, d.created_date, d.expired_date, d.last_seen, 'device', d.device_id,
         d.name, d.replica_id, u.record
       FROM devices d JOIN users u ON u.username = d.username
       WHERE d.id_hash = $1 AND d.revoked_time IS NULL`,
      [hash],
    );
    const row = rows[0];
    if (!row) return undefined;
    const { record, kind, deviceId, name, replicaId, ...session } = row;
    const found: SessionLookup = {
      session: kind === 'device' ? { ...session, kind, deviceId, name, replicaId } : session,
      user: record,
    };
    this.cache?.remember(ticket, hash, found);
    return found;
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
    // Not a change other instances must hear of: their copies are at most a few seconds old, and
    // an instance touches at most once a minute (SessionService), which it would not by its copy.
    this.cache?.touched(hash, lastSeen);
    await this.pool.query(
      `WITH touched AS (
         UPDATE sessions SET last_seen = $2 WHERE id_hash = $1 AND last_seen < $2
       )
       UPDATE devices SET last_seen = $2
       WHERE id_hash = $1 AND last_seen < $2 AND revoked_time IS NULL`,
      [hash, lastSeen],
    );
  }

  async deleteSessions(hashes: string[]): Promise<void> {
    if (hashes.length === 0) return;
    await this.pool.query(
      `WITH ended AS (DELETE FROM sessions WHERE id_hash = ANY($1::text[]) RETURNING id_hash)
       ${NOTIFY_ENDED}`,
      [hashes],
    );
    this.cache?.dropSessions(hashes);
  }

  async deleteExpiredSessions(now: number, idleMs: number): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      `WITH ended AS (
         DELETE FROM sessions
         WHERE expired_date <= $1::bigint OR last_seen < $1::bigint - $2::bigint
         RETURNING id_hash
       )
       ${NOTIFY_ENDED}`,
      [now, idleMs],
    );
    const ended = rows[0]!.n;
    // Sessions past their time are never served from the cache anyway (SessionCache.get).
    if (ended > 0) this.cache?.clear();
    return ended;
  }

  async createDevice(hash: string, device: DeviceRecord): Promise<CreateDeviceResult> {
    // One statement: the same user's live device for the replica is revoked and the new one
    // inserted; another user's live device for it makes the insert violate devices_live_replica
    // (the unique index also settles two instances creating at once).
    // The replaced devices' tokens end on every instance: the notice names them.
    try {
      await this.pool.query(
        `WITH ended AS (
           UPDATE devices SET revoked_time = $6
           WHERE replica_id = $5 AND username = $3 AND revoked_time IS NULL
           RETURNING id_hash
         ), noticed AS (${NOTIFY_ENDED})
         INSERT INTO devices
           (id_hash, device_id, username, name, replica_id, created_date, expired_date, last_seen)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8 FROM noticed`,
        [
          hash,
          device.deviceId,
          device.username,
          device.name,
          device.replicaId,
          device.createdDate,
          device.expiredDate,
          device.lastSeen,
        ],
      );
      // Which ones were replaced is not known here; the user's other sessions are re-read too.
      this.cache?.dropUser(device.username);
      return 'created';
    } catch (error) {
      if ((error as { constraint?: string }).constraint === 'devices_live_replica')
        return 'replica-taken';
      throw error;
    }
  }

  async listDevices(username?: string): Promise<DeviceRecord[]> {
    const { rows } = await this.pool.query<DeviceRow>(
      `${SELECT_DEVICE} WHERE revoked_time IS NULL AND ($1::text IS NULL OR username = $1)`,
      [username ?? null],
    );
    return rows.map(deviceOf).sort(byOwnerThenAge);
  }

  async getDevice(deviceId: string): Promise<DeviceRecord | undefined> {
    const { rows } = await this.pool.query<DeviceRow>(
      `${SELECT_DEVICE} WHERE device_id = $1 AND revoked_time IS NULL`,
      [deviceId],
    );
    return rows[0] && deviceOf(rows[0]);
  }

  async deviceOfReplica(replicaId: string): Promise<DeviceRecord | undefined> {
    const { rows } = await this.pool.query<DeviceRow>(
      `${SELECT_DEVICE} WHERE replica_id = $1 AND revoked_time IS NULL`,
      [replicaId],
    );
    return rows[0] && deviceOf(rows[0]);
  }

  async revokeDevice(deviceId: string, now: number): Promise<boolean> {
    const { rows } = await this.pool.query<{ n: number; hash: string | null }>(
      `WITH ended AS (
         UPDATE devices SET revoked_time = $2 WHERE device_id = $1 AND revoked_time IS NULL
         RETURNING id_hash
       )
       SELECT n, (SELECT id_hash FROM ended) AS hash FROM (${NOTIFY_ENDED}) AS noticed`,
      [deviceId, now],
    );
    const { n, hash } = rows[0]!;
    if (hash !== null) this.cache?.dropSessions([hash]);
    return n === 1;
  }

  async isRevokedDevice(hash: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      'SELECT 1 FROM devices WHERE id_hash = $1 AND revoked_time IS NOT NULL',
      [hash],
    );
    return rowCount === 1;
  }

  async revokeIdleDevices(now: number, idleMs: number): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      `WITH ended AS (
         UPDATE devices SET revoked_time = $1
         WHERE revoked_time IS NULL AND last_seen < $1::bigint - $2::bigint
         RETURNING id_hash
       )
       ${NOTIFY_ENDED}`,
      [now, idleMs],
    );
    const ended = rows[0]!.n;
    if (ended > 0) this.cache?.clear();
    return ended;
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

  async clearAttemptsStartingWith(prefix: string, now: number): Promise<boolean> {
    // starts_with, not LIKE: a username may hold "_", which LIKE reads as a wildcard.
    const { rows } = await this.pool.query<{ blocking: boolean }>(
      `DELETE FROM sign_in_attempts WHERE starts_with(key, $1)
       RETURNING blocked_until > $2::bigint AS blocking`,
      [prefix, now],
    );
    return rows.some((row) => row.blocking);
  }

  async pruneAttempts(now: number, windowMs: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      'DELETE FROM sign_in_attempts WHERE blocked_until < $1::bigint AND window_start < $1::bigint - $2::bigint',
      [now, windowMs],
    );
    return rowCount ?? 0;
  }
}

const SELECT_DEVICE = `SELECT device_id AS "deviceId", username, name, replica_id AS "replicaId",
  created_date AS "createdDate", expired_date AS "expiredDate", last_seen AS "lastSeen",
  revoked_time AS "revokedTime" FROM devices`;

type DeviceRow = Omit<DeviceRecord, 'kind' | 'revokedTime'> & { revokedTime: number | null };

function deviceOf({ revokedTime, ...row }: DeviceRow): DeviceRecord {
  return {
    kind: 'device',
    ...row,
    ...(revokedTime === null ? {} : { revokedTime }),
  };
}
