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

  delete(username: string): Promise<void> {
    return this.store.commit([
      { type: 'del', col: 'users', key: username },
      ...this.endSessionsOps(username),
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

  /** Ops that end every session of `username`; commit them with the change that requires it. */
  endSessionsOps(username: string): Op[] {
    const ops: Op[] = [];
    for (const [key, session] of this.store.collection<SessionRecord>('sessions')) {
      if (session.username === username) ops.push({ type: 'del', col: 'sessions', key });
    }
    return ops;
  }

  expiredSessions(now: number, idleMs: number): string[] {
    const expired: string[] = [];
    for (const [key, session] of this.store.collection<SessionRecord>('sessions')) {
      if (session.expiredDate <= now || now - session.lastSeen > idleMs) expired.push(key);
    }
    return expired;
  }
}

export type { Role };
