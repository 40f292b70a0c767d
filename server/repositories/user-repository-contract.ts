import type { Role, User } from '../../shared';

export interface UserRecord extends User {
  passwordHash: string;
}

export interface SessionRecord {
  username: string;
  createdDate: number;
  expiredDate: number;
  lastSeen: number;
}

/** A session with the user it belongs to, as one lookup finds them. */
export interface SessionLookup {
  session: SessionRecord;
  user: UserRecord;
}

/** Failed sign-ins counted under one key (see SignInThrottle). */
export interface AttemptCount {
  failures: number;
  windowStart: number;
  blockedUntil: number;
}

/** A value now, or later: the embedded backend answers lookups at once, PostgreSQL after a query. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * Users, their sessions and failed sign-ins: what every backend keeps for authentication
 * (DESIGN §12). Sessions are keyed by the SHA-256 of their id, never the id. One contract test
 * suite (test/server/contract/user-repository.contract.ts) runs against every implementation.
 *
 * Invariants:
 * - A change is visible to every later call on any instance as soon as its promise resolves.
 * - Ending sessions (sign-out, password or role change, user deleted) is never undone by a
 *   concurrent `touchSession`.
 */
export interface UserRepository {
  get(username: string): Promise<UserRecord | undefined>;
  /** Every user, by username (`localeCompare`). */
  list(): Promise<UserRecord[]>;
  count(): Promise<number>;
  countAdmins(): Promise<number>;
  /** Adds a user; false (and nothing changed) when the username is taken. */
  insert(user: UserRecord): Promise<boolean>;
  /** Replaces a stored user; with `endSessions`, every session of theirs ends in the same change. */
  update(user: UserRecord, options?: { endSessions?: boolean }): Promise<void>;
  /** Removes the user and their sessions; false when there was no such user. */
  delete(username: string): Promise<boolean>;

  /** The session and its user, or undefined. May answer at once (no promise). */
  findSession(hash: string): MaybePromise<SessionLookup | undefined>;
  saveSession(hash: string, session: SessionRecord): Promise<void>;
  /** Records a session's last use, if it still exists. */
  touchSession(hash: string, lastSeen: number): Promise<void>;
  deleteSessions(hashes: string[]): Promise<void>;
  /** Ends sessions past their lifetime or idle longer than `idleMs`; answers how many. */
  deleteExpiredSessions(now: number, idleMs: number): Promise<number>;

  /** The failed sign-ins counted under `key`, or undefined. */
  attempts(key: string): Promise<AttemptCount | undefined>;
  /**
   * Counts one more failure under `key`: a window older than `windowMs` starts again at one, and
   * reaching `limit` blocks the key until `now + windowMs`. Atomic across instances.
   */
  recordFailure(key: string, limit: number, windowMs: number, now: number): Promise<void>;
  clearAttempts(key: string): Promise<void>;
  /** Forgets counts whose window and block are both over; answers how many. */
  pruneAttempts(now: number, windowMs: number): Promise<number>;
}

export type { Role };
