import type { Role, User } from '../../shared';

export interface UserRecord extends User {
  passwordHash: string;
}

export interface SessionRecord {
  username: string;
  createdDate: number;
  expiredDate: number;
  lastSeen: number;
  /**
   * A device token (sync, DESIGN §10): revoked explicitly, with its user's password or role
   * change or deletion, or after a long idle time (`revokeIdleDevices`). Absent: a session.
   */
  kind?: 'device';
  deviceId?: string;
  /** The device's name, as its owner gave it. */
  name?: string;
  /** The replica the device pushes for; bound to this device while it is not revoked. */
  replicaId?: string;
  /** When the device was signed out of the hub; kept so its token answers DEVICE_REVOKED. */
  revokedTime?: number;
}

/** A device token of a sync replica, keyed like a session by the SHA-256 of its token. */
export interface DeviceRecord extends SessionRecord {
  kind: 'device';
  deviceId: string;
  name: string;
  replicaId: string;
}

/** How `createDevice` ended. */
export type CreateDeviceResult = 'created' | 'replica-taken';

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
 * - A change is visible to every later call on any instance as soon as its promise resolves;
 *   one exception: PostgreSQL's per-instance session cache lets `findSession` on ANOTHER instance
 *   answer the old session until that instance hears of the change (PgUserRepository).
 * - Ending sessions (sign-out, password or role change, user deleted) is never undone by a
 *   concurrent `touchSession`.
 * - Device tokens (DESIGN §10) are found by `findSession` like sessions (with `kind: 'device'`)
 *   while they are live. Session sweeps and sign-outs (`deleteSessions`) leave them alone;
 *   `update(…, { endSessions })` (password reset, role change) and deleting their user revoke
 *   them in the same change, and `revokeIdleDevices` those unused too long. A revoked device is
 *   kept (never found by `findSession`, but by `isRevokedDevice`) so its token can answer
 *   DEVICE_REVOKED.
 * - A replica id belongs to at most one live device (`createDevice` is atomic across instances).
 */
export interface UserRepository {
  get(username: string): Promise<UserRecord | undefined>;
  /** Every user, by username (`localeCompare`). */
  list(): Promise<UserRecord[]>;
  count(): Promise<number>;
  countAdmins(): Promise<number>;
  /** Adds a user; false (and nothing changed) when the username is taken. */
  insert(user: UserRecord): Promise<boolean>;
  /**
   * Replaces a stored user; with `endSessions`, every session of theirs ends and every live
   * device of theirs is revoked (at `now`) in the same change.
   */
  update(user: UserRecord, options?: { endSessions?: boolean; now?: number }): Promise<void>;
  /**
   * Removes the user and their sessions and revokes their devices (at `now`); false when there
   * was no such user.
   */
  delete(username: string, now?: number): Promise<boolean>;

  /** The live session or device and its user, or undefined. May answer at once (no promise). */
  findSession(hash: string): MaybePromise<SessionLookup | undefined>;
  saveSession(hash: string, session: SessionRecord): Promise<void>;
  /** Records a session's (or live device's) last use, if it still exists. */
  touchSession(hash: string, lastSeen: number): Promise<void>;
  /** Ends these sessions; a device token among them is left alone (devices are revoked). */
  deleteSessions(hashes: string[]): Promise<void>;
  /** Ends sessions past their lifetime or idle longer than `idleMs`; answers how many. Never devices. */
  deleteExpiredSessions(now: number, idleMs: number): Promise<number>;

  /**
   * Stores a new device under the hash of its token. A live device of ANOTHER user with the same
   * replica id: 'replica-taken' and nothing changed. The same user's live devices for that
   * replica id are revoked (at `device.createdDate`) in the same change (the replica signed in
   * again).
   */
  createDevice(hash: string, device: DeviceRecord): Promise<CreateDeviceResult>;
  /** Live devices, of one user or of all, by username then createdDate. */
  listDevices(username?: string): Promise<DeviceRecord[]>;
  /** A live device by its id, or undefined (also once revoked). */
  getDevice(deviceId: string): Promise<DeviceRecord | undefined>;
  /** The live device bound to a replica id, or undefined. */
  deviceOfReplica(replicaId: string): Promise<DeviceRecord | undefined>;
  /** Revokes a live device; false when there was no such live device. */
  revokeDevice(deviceId: string, now: number): Promise<boolean>;
  /** Whether the token with this hash is a device that was revoked (not an unknown token). */
  isRevokedDevice(hash: string): Promise<boolean>;
  /** Revokes (at `now`) live devices not used for longer than `idleMs`; answers how many. */
  revokeIdleDevices(now: number, idleMs: number): Promise<number>;

  /** The failed sign-ins counted under `key`, or undefined. */
  attempts(key: string): Promise<AttemptCount | undefined>;
  /**
   * Counts one more failure under `key`: a window older than `windowMs` starts again at one, and
   * reaching `limit` blocks the key until `now + windowMs`. Atomic across instances.
   */
  recordFailure(key: string, limit: number, windowMs: number, now: number): Promise<void>;
  clearAttempts(key: string): Promise<void>;
  /**
   * Forgets every count whose key starts with `prefix` (an admin's unlock); answers whether one
   * of them was blocking at `now`.
   */
  clearAttemptsStartingWith(prefix: string, now: number): Promise<boolean>;
  /** Forgets counts whose window and block are both over; answers how many. */
  pruneAttempts(now: number, windowMs: number): Promise<number>;
}

export type { Role };
