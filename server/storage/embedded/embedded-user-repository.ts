import type { Op, Store } from './store';
import type {
  AttemptCount,
  CreateDeviceResult,
  DeviceRecord,
  SessionLookup,
  SessionRecord,
  UserRecord,
  UserRepository,
} from '../../repositories/user-repository-contract';

export type {
  DeviceRecord,
  Role,
  SessionLookup,
  SessionRecord,
  UserRecord,
  UserRepository,
} from '../../repositories/user-repository-contract';

/** The order users are listed in, on every backend. */
export const byUsername = (a: UserRecord, b: UserRecord) => a.username.localeCompare(b.username);

/** The order devices are listed in, on every backend. */
export const byOwnerThenAge = (a: DeviceRecord, b: DeviceRecord) =>
  a.username.localeCompare(b.username) || a.createdDate - b.createdDate;

const isDevice = (session: SessionRecord): session is DeviceRecord => session.kind === 'device';
const isLiveDevice = (session: SessionRecord): session is DeviceRecord =>
  isDevice(session) && session.revokedTime === undefined;

/** Failed-sign-in keys kept at most before stale ones are pruned. */
const MAX_ATTEMPT_KEYS = 10_000;

/**
 * Users and sessions in the embedded store. Lookups answer from memory at once; a change is
 * applied to memory when committed, so a check followed by a commit in the same turn cannot race.
 * Failed sign-ins are counted in memory only: one process serves the data directory. Device
 * tokens are kept in the sessions collection with `kind: 'device'`.
 */
export class EmbeddedUserRepository implements UserRepository {
  private readonly failures = new Map<string, AttemptCount>();

  constructor(private readonly store: Store) {}

  getNow(username: string): UserRecord | undefined {
    return this.store.get<UserRecord>('users', username);
  }

  async get(username: string): Promise<UserRecord | undefined> {
    return this.getNow(username);
  }

  async list(): Promise<UserRecord[]> {
    return [...this.store.collection<UserRecord>('users').values()].sort(byUsername);
  }

  async count(): Promise<number> {
    return this.store.collection('users').size;
  }

  async countAdmins(): Promise<number> {
    let admins = 0;
    for (const user of this.store.collection<UserRecord>('users').values())
      if (user.role === 'admin') admins++;
    return admins;
  }

  async insert(user: UserRecord): Promise<boolean> {
    if (this.getNow(user.username)) return false;
    await this.store.commit([{ type: 'put', col: 'users', key: user.username, value: user }]);
    return true;
  }

  update(user: UserRecord, options: { endSessions?: boolean; now?: number } = {}): Promise<void> {
    return this.store.commit([
      { type: 'put', col: 'users', key: user.username, value: user },
      ...(options.endSessions
        ? [
            ...this.endSessionsOps(user.username),
            ...this.revokeDevicesOps(user.username, options.now ?? Date.now()),
          ]
        : []),
    ]);
  }

  async delete(username: string, now: number = Date.now()): Promise<boolean> {
    if (!this.getNow(username)) return false;
    await this.store.commit([
      { type: 'del', col: 'users', key: username },
      ...this.endSessionsOps(username),
      ...this.revokeDevicesOps(username, now),
    ]);
    return true;
  }

  findSession(hash: string): SessionLookup | undefined {
    const session = this.store.get<SessionRecord>('sessions', hash);
    if (session?.revokedTime !== undefined) return undefined;
    const user = session && this.getNow(session.username);
    return session && user ? { session, user } : undefined;
  }

  saveSession(hash: string, session: SessionRecord): Promise<void> {
    return this.store.commit([{ type: 'put', col: 'sessions', key: hash, value: session }]);
  }

  async touchSession(hash: string, lastSeen: number): Promise<void> {
    const session = this.store.get<SessionRecord>('sessions', hash);
    if (!session || session.lastSeen >= lastSeen || session.revokedTime !== undefined) return;
    await this.saveSession(hash, { ...session, lastSeen });
  }

  deleteSessions(hashes: string[]): Promise<void> {
    const ended = hashes.filter((key) => {
      const session = this.store.get<SessionRecord>('sessions', key);
      return session !== undefined && !isDevice(session);
    });
    return this.store.commit(ended.map((key) => ({ type: 'del', col: 'sessions', key })));
  }

  async deleteExpiredSessions(now: number, idleMs: number): Promise<number> {
    const expired: string[] = [];
    for (const [key, session] of this.store.collection<SessionRecord>('sessions')) {
      if (isDevice(session)) continue;
      if (session.expiredDate <= now || now - session.lastSeen > idleMs) expired.push(key);
    }
    if (expired.length > 0) await this.deleteSessions(expired);
    return expired.length;
  }

  async createDevice(hash: string, device: DeviceRecord): Promise<CreateDeviceResult> {
    const ops: Op[] = [];
    for (const [key, live] of this.liveDevices()) {
      if (live.replicaId !== device.replicaId) continue;
      if (live.username !== device.username) return 'replica-taken';
      ops.push({
        type: 'put',
        col: 'sessions',
        key,
        value: { ...live, revokedTime: device.createdDate },
      });
    }
    ops.push({ type: 'put', col: 'sessions', key: hash, value: device });
    await this.store.commit(ops);
    return 'created';
  }

  async listDevices(username?: string): Promise<DeviceRecord[]> {
    return this.liveDevices()
      .map(([, device]) => device)
      .filter((device) => username === undefined || device.username === username)
      .sort(byOwnerThenAge);
  }

  async getDevice(deviceId: string): Promise<DeviceRecord | undefined> {
    return this.liveDevices().find(([, device]) => device.deviceId === deviceId)?.[1];
  }

  async deviceOfReplica(replicaId: string): Promise<DeviceRecord | undefined> {
    return this.liveDevices().find(([, device]) => device.replicaId === replicaId)?.[1];
  }

  async revokeDevice(deviceId: string, now: number): Promise<boolean> {
    const found = this.liveDevices().find(([, device]) => device.deviceId === deviceId);
    if (!found) return false;
    await this.saveSession(found[0], { ...found[1], revokedTime: now });
    return true;
  }

  async isRevokedDevice(hash: string): Promise<boolean> {
    const session = this.store.get<SessionRecord>('sessions', hash);
    return session !== undefined && isDevice(session) && session.revokedTime !== undefined;
  }

  async revokeIdleDevices(now: number, idleMs: number): Promise<number> {
    const ops: Op[] = this.liveDevices()
      .filter(([, device]) => now - device.lastSeen > idleMs)
      .map(([key, device]) => ({
        type: 'put',
        col: 'sessions',
        key,
        value: { ...device, revokedTime: now },
      }));
    if (ops.length > 0) await this.store.commit(ops);
    return ops.length;
  }

  async attempts(key: string): Promise<AttemptCount | undefined> {
    const entry = this.failures.get(key);
    return entry && { ...entry };
  }

  async recordFailure(key: string, limit: number, windowMs: number, now: number): Promise<void> {
    if (this.failures.size > MAX_ATTEMPT_KEYS) await this.pruneAttempts(now, windowMs);
    let entry = this.failures.get(key);
    if (!entry || now - entry.windowStart > windowMs) {
      entry = { failures: 0, windowStart: now, blockedUntil: 0 };
      this.failures.set(key, entry);
    }
    entry.failures += 1;
    if (entry.failures >= limit) entry.blockedUntil = now + windowMs;
  }

  async clearAttempts(key: string): Promise<void> {
    this.failures.delete(key);
  }

  async clearAttemptsStartingWith(prefix: string, now: number): Promise<boolean> {
    let blocking = false;
    for (const [key, entry] of this.failures) {
      if (!key.startsWith(prefix)) continue;
      blocking ||= entry.blockedUntil > now;
      this.failures.delete(key);
    }
    return blocking;
  }

  async pruneAttempts(now: number, windowMs: number): Promise<number> {
    let pruned = 0;
    for (const [key, entry] of this.failures) {
      if (entry.blockedUntil < now && now - entry.windowStart > windowMs) {
        this.failures.delete(key);
        pruned++;
      }
    }
    return pruned;
  }

  /** Ops that end every session of `username`; their devices are revoked by revokeDevicesOps. */
  private endSessionsOps(username: string): Op[] {
    const ops: Op[] = [];
    for (const [key, session] of this.store.collection<SessionRecord>('sessions')) {
      if (session.username === username && !isDevice(session))
        ops.push({ type: 'del', col: 'sessions', key });
    }
    return ops;
  }

  /** Ops that revoke every live device of `username` (a revoked device never comes back). */
  private revokeDevicesOps(username: string, now: number): Op[] {
    return this.liveDevices()
      .filter(([, device]) => device.username === username)
      .map(([key, device]) => ({
        type: 'put',
        col: 'sessions',
        key,
        value: { ...device, revokedTime: now },
      }));
  }

  private liveDevices(): Array<[hash: string, device: DeviceRecord]> {
    const found: Array<[string, DeviceRecord]> = [];
    for (const [key, session] of this.store.collection<SessionRecord>('sessions'))
      if (isLiveDevice(session)) found.push([key, session]);
    return found;
  }
}
