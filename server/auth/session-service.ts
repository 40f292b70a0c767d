import { createHash, randomBytes } from 'node:crypto';
import type { Session } from '../../shared';
import type { AuthOptions } from '../config';
import { ApiError } from '../errors';
import { Lru } from '../repositories/lru';
import type { SessionRecord, UserRecord, UserRepository } from '../repositories/user-repository';
import { hashPassword, verifyPassword } from './password';
import { SignInThrottle } from './sign-in-throttle';

/**
 * How often a session's last use is written down, at most; idle expiry is exact to this much.
 * A short configured idle time shortens it too (a quarter of the idle time), or a session in
 * constant use would still expire as if idle.
 */
const TOUCH_INTERVAL_MS = 60_000;

export interface Authenticated {
  user: UserRecord;
  session: SessionRecord;
  sessionHash: string;
}

export const hashSessionId = (sessionId: string) =>
  createHash('sha256').update(sessionId).digest('hex');

/** Accepts the raw session id (as the interface shows) or `Bearer <id>`. */
export function sessionIdFrom(header: string | undefined): string | null {
  if (!header) return null;
  const value = header.trim();
  const match = /^Bearer\s+(\S+)$/i.exec(value);
  const id = match ? match[1]! : value;
  return /^[A-Za-z0-9_-]{16,128}$/.test(id) ? id : null;
}

export class SessionService {
  private readonly throttle: SignInThrottle;
  private dummyHash: Promise<string> | null = null;
  /**
   * Hashes of the session ids in recent use: every request of a session is authenticated, and
   * hashing each time was about 5 % of a small request. Only the stored sessions decide
   * validity, so a remembered hash of a session since ended finds nothing.
   */
  private readonly recentHashes = new Lru<string>(1024);

  constructor(
    private readonly users: UserRepository,
    private readonly config: AuthOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.throttle = new SignInThrottle(config.maxFailedSignIns, config.failureWindowMs, now);
  }

  /**
   * Checks the credentials and opens a session. An unknown username costs the same scrypt work
   * as a wrong password, and both answer the same 401.
   */
  async signIn(username: string, password: string, address: string): Promise<Session> {
    const wait = this.throttle.retryAfter(address, username);
    if (wait > 0) {
      throw new ApiError('TOO_MANY_ATTEMPTS', undefined, [], {
        'retry-after': String(Math.ceil(wait / 1000)),
      });
    }
    const user = this.users.get(username);
    this.dummyHash ??= hashPassword('no such user', this.config.scryptLogN);
    const valid = await verifyPassword(password, user?.passwordHash ?? (await this.dummyHash));
    // The check took a while: if the account changed meanwhile (password reset, demotion,
    // deletion), the password was checked against a version that no longer counts. Records are
    // immutable, so identity tells.
    const unchanged = user !== undefined && this.users.get(username) === user;
    if (!user || !valid || !unchanged) {
      this.throttle.recordFailure(address, username);
      throw new ApiError('INVALID_CREDENTIALS');
    }
    this.throttle.recordSuccess(address, username);
    return this.open(user.username);
  }

  /** Opens a session without a password: for the desktop shell's local owner only. */
  async open(username: string): Promise<Session> {
    const sessionId = randomBytes(32).toString('base64url');
    const createdDate = this.now();
    const record: SessionRecord = {
      username,
      createdDate,
      expiredDate: createdDate + this.config.sessionLifetimeMs,
      lastSeen: createdDate,
    };
    await this.users.saveSession(hashSessionId(sessionId), record);
    return { sessionId, createdDate, expiredDate: record.expiredDate };
  }

  authenticate(header: string | undefined): Authenticated {
    const sessionId = sessionIdFrom(header);
    if (!sessionId) throw new ApiError('UNAUTHORIZED');
    let sessionHash = this.recentHashes.use(sessionId);
    if (sessionHash === undefined) {
      sessionHash = hashSessionId(sessionId);
      this.recentHashes.put(sessionId, sessionHash);
    }
    const session = this.users.getSession(sessionHash);
    if (session?.kind === 'device') return this.authenticateDevice(sessionHash, session);
    const user = session && this.users.get(session.username);
    if (!session || !user)
      throw new ApiError('UNAUTHORIZED', 'The session is not valid; sign in again.');
    const now = this.now();
    if (session.expiredDate <= now || now - session.lastSeen > this.config.sessionIdleMs) {
      void this.users.deleteSessions([sessionHash]).catch(() => {});
      throw new ApiError('SESSION_EXPIRED');
    }
    if (now - session.lastSeen >= Math.min(TOUCH_INTERVAL_MS, this.config.sessionIdleMs / 4)) {
      // Not awaited: a lost touch only shortens the idle window by one interval.
      void this.users.saveSession(sessionHash, { ...session, lastSeen: now }).catch(() => {});
    }
    return { user, session, sessionHash };
  }

  /**
   * A device token (DESIGN §10): acts with its user's current rights, never expires by
   * idleness, and answers DEVICE_REVOKED once signed out of the hub.
   */
  private authenticateDevice(sessionHash: string, device: SessionRecord): Authenticated {
    if (device.revokedTime !== undefined) throw new ApiError('DEVICE_REVOKED');
    const user = this.users.get(device.username);
    if (!user) throw new ApiError('DEVICE_REVOKED');
    const now = this.now();
    if (device.expiredDate <= now) throw new ApiError('SESSION_EXPIRED');
    if (now - device.lastSeen >= TOUCH_INTERVAL_MS) {
      // Read again right before the write: a revocation committed since must not be undone.
      const latest = this.users.getSession(sessionHash);
      if (latest && latest.revokedTime === undefined)
        void this.users.saveSession(sessionHash, { ...latest, lastSeen: now }).catch(() => {});
    }
    return { user, session: device, sessionHash };
  }

  idleExpiresAt(session: SessionRecord): number {
    return Math.min(
      session.expiredDate,
      Math.max(session.lastSeen, this.now()) + this.config.sessionIdleMs,
    );
  }

  signOut(sessionHash: string): Promise<void> {
    return this.users.deleteSessions([sessionHash]);
  }

  async sweepExpired(): Promise<number> {
    const expired = this.users.expiredSessions(this.now(), this.config.sessionIdleMs);
    if (expired.length > 0) await this.users.deleteSessions(expired);
    return expired.length;
  }
}
