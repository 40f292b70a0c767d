import type { Role, User } from '../../shared';
import type { Op, Store } from '../storage/store';

export interface UserRecord extends User {
  passwordHash: string;
}

export interface SessionRecord {
  username: string;
  createdDate: number;
  expiredDate: number;
  lastSeen: number;
  /** A device token (sync, DESIGN §10): no idle expiry, revoked explicitly. Absent: a session. */
  kind?: 'device';
  deviceId?: string;
  /** The device's name, as its owner gave it. */
  name?: string;
  /** The replica the device pushes for; bound to this device while it is not revoked. */
  replicaId?: string;
  /** When the device was signed out of the hub; kept so its token answers DEVICE_REVOKED. */
  revokedTime?: number;
}

/** Users and their sessions: sessions are keyed by the SHA-256 of their id, never the id. */
export class UserRepository {
  constructor(private readonly store: Store) {}

  get(username: string): UserRecord | undefined {
    return this.store.get<UserRecord>('users', username);
  }

  list(): UserRecord[] {
    return [...this.store.collection<UserRecord>('users').values()].sort((a, b) =>
      a.username.localeCompare(b.username),
    );
  }

  count(): number {
    return this.store.collection('users').size;
  }

  countAdmins(): number {
    let admins = 0;
    for (const user of this.store.collection<UserRecord>('users').values())
      if (user.role === 'admin') admins++;
    return admins;
  }

  save(user: UserRecord, extra: Op[] = []): Promise<void> {
    return this.store.commit([
      { type: 'put', col: 'users', key: user.username, value: user },
      ...extra,
    ]);
  }

  delete(username: string, now: number = Date.now()): Promise<void> {
    return this.store.commit([
      { type: 'del', col: 'users', key: username },
      ...this.endSessionsOps(username),
      ...this.revokeDevicesOps(username, now),
    ]);
  }

  getSession(hash: string): SessionRecord | undefined {
    return this.store.get<SessionRecord>('sessions', hash);
  }

  saveSession(hash: string, session: SessionRecord): Promise<void> {
    return this.store.commit([{ type: 'put', col: 'sessions', key: hash, value: session }]);
  }

  deleteSessions(hashes: string[]): Promise<void> {
    return this.store.commit(hashes.map((key) => ({ type: 'del', col: 'sessions', key })));
  }

  /** Stores several sessions (or device tokens) in one commit. */
  saveSessions(entries: Array<[hash: string, session: SessionRecord]>): Promise<void> {
    return this.store.commit(
      entries.map(([key, value]) => ({ type: 'put', col: 'sessions', key, value })),
    );
  }

  /** Every device token, revoked ones included, keyed by the hash of the token. */
  devices(): Array<[hash: string, device: SessionRecord]> {
    return [...this.store.collection<SessionRecord>('sessions')].filter(
      ([, session]) => session.kind === 'device',
    );
  }

  /**
   * Ops that end every session of `username`; commit them with the change that requires it.
   * Device tokens stay: they are revoked explicitly (or with `revokeDevicesOps`).
   */
  endSessionsOps(username: string): Op[] {
    const ops: Op[] = [];
    for (const [key, session] of this.store.collection<SessionRecord>('sessions')) {
      if (session.username === username && session.kind !== 'device')
        ops.push({ type: 'del', col: 'sessions', key });
    }
    return ops;
  }

  /** Ops that revoke every device of `username` (a deleted user's devices never come back). */
  revokeDevicesOps(username: string, now: number): Op[] {
    return this.devices()
      .filter(([, device]) => device.username === username && device.revokedTime === undefined)
      .map(([key, device]) => ({
        type: 'put',
        col: 'sessions',
        key,
        value: { ...device, revokedTime: now },
      }));
  }

  /** Sessions past their lifetime or idle time; device tokens have neither and are never listed. */
  expiredSessions(now: number, idleMs: number): string[] {
    const expired: string[] = [];
    for (const [key, session] of this.store.collection<SessionRecord>('sessions')) {
      if (session.kind === 'device') continue;
      if (session.expiredDate <= now || now - session.lastSeen > idleMs) expired.push(key);
    }
    return expired;
  }
}

export type { Role };
