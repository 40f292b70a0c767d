import { createHash, randomBytes } from 'node:crypto';
import { type Session, waitInWords } from '../../shared';
import type { AuthOptions } from '../config';
import { ApiError } from '../errors';
import { Lru } from '../lib/lru';
import type {
  SessionLookup,
  SessionRecord,
  UserRecord,
  UserRepository,
} from '../repositories/user-repository-contract';
import { hashPassword, verifyPassword } from './password';
import { SignInThrottle } from './sign-in-throttle';

/**
 * How often a session's last use is written down, at most; idle expiry is exact to this much.
 * A short configured idle time shortens it too (a quarter of the idle time), or a session in
 * constant use would still expire as if idle.
 */
const TOUCH_INTERVAL_MS = 60_000;
/** The same for device tokens, whose idle time is counted in days (AuthOptions.deviceIdleMs). */
const DEVICE_TOUCH_INTERVAL_MS = 60 * 60_000;

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
    this.throttle = new SignInThrottle(users, config.maxFailedSignIns, config.failureWindowMs, now);
  }

  /**
   * Checks the credentials and opens a session. An unknown username costs the same scrypt work
   * as a wrong password, and both answer the same 401.
   */
  async signIn(username: string, password: string, address: string): Promise<Session> {
    const wait = await this.throttle.retryAfter(address, username);
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000);
      throw new ApiError(
        'TOO_MANY_ATTEMPTS',
        `Too many failed sign-ins; try again in ${waitInWords(seconds)}, or ask an admin to unlock this user.`,
        [],
        { 'retry-after': String(seconds) },
      );
    }
    const user = await this.users.get(username);
    this.dummyHash ??= hashPassword('no such user', this.config.scryptLogN);
    const valid = await verifyPassword(password, user?.passwordHash ?? (await this.dummyHash));
    // The check took a while: if the account changed meanwhile (password reset, demotion,
    // deletion), the password was checked against a version that no longer counts. Every change
    // of a user sets a new modifiedTime or password hash.
    const current = user && (await this.users.get(username));
    const unchanged =
      current !== undefined &&
      current.passwordHash === user!.passwordHash &&
      current.modifiedTime === user!.modifiedTime &&
      current.role === user!.role;
    if (!user || !valid || !unchanged) {
      await this.throttle.recordFailure(address, username);
      throw new ApiError('INVALID_CREDENTIALS');
    }
    await this.throttle.recordSuccess(address, username);
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

  /**
   * The caller of a request with this Authorization header, or an ApiError. Answers at once
   * (no promise) when the repository does (the embedded store; PostgreSQL for a session it
   * remembers), so the hook that runs on every request costs no extra turn then; otherwise
   * PostgreSQL reads the session, and a session ended on another instance is ended here as soon
   * as its notice arrives (PgUserRepository, SessionCache).
   */
  authenticate(header: string | undefined): Authenticated | Promise<Authenticated> {
    const sessionId = sessionIdFrom(header);
    if (!sessionId) throw new ApiError('UNAUTHORIZED');
    let sessionHash = this.recentHashes.use(sessionId);
    if (sessionHash === undefined) {
      sessionHash = hashSessionId(sessionId);
      this.recentHashes.put(sessionId, sessionHash);
    }
    const hash = sessionHash;
    const found = this.users.findSession(hash);
    return found instanceof Promise
      ? found.then((lookup) => this.check(hash, lookup))
      : this.check(hash, found);
  }

  private check(
    sessionHash: string,
    found: SessionLookup | undefined,
  ): Authenticated | Promise<Authenticated> {
    if (!found) return this.unknown(sessionHash);
    const { session, user } = found;
    if (session.kind === 'device') return this.checkDevice(sessionHash, found);
    const now = this.now();
    if (session.expiredDate <= now || now - session.lastSeen > this.config.sessionIdleMs) {
      void this.users.deleteSessions([sessionHash]).catch(() => {});
      throw new ApiError('SESSION_EXPIRED');
    }
    if (now - session.lastSeen >= Math.min(TOUCH_INTERVAL_MS, this.config.sessionIdleMs / 4)) {
      // Not awaited: a lost touch only shortens the idle window by one interval.
      void this.users.touchSession(sessionHash, now).catch(() => {});
    }
    return { user, session, sessionHash };
  }

  /** No live session or device: a revoked device's token says so, anything else is 401 UNAUTHORIZED. */
  private async unknown(sessionHash: string): Promise<never> {
    if (await this.users.isRevokedDevice(sessionHash)) throw new ApiError('DEVICE_REVOKED');
    throw new ApiError('UNAUTHORIZED', 'The session is not valid; sign in again.');
  }

  /**
   * A device token (DESIGN §10): acts with its user's current rights until revoked or unused for
   * `deviceIdleMs`; an idle one is revoked here (the sweep revokes the others). The lookup found
   * it live; a revocation committed since is never undone by the touch. Its last use is written
   * down at most once an hour: a replica calls often, and idle expiry is measured in days.
   */
  private checkDevice(sessionHash: string, { session, user }: SessionLookup): Authenticated {
    const now = this.now();
    const idleMs = this.config.deviceIdleMs;
    if (now - session.lastSeen > idleMs && session.deviceId !== undefined) {
      void this.users.revokeDevice(session.deviceId, now).catch(() => {});
      throw new ApiError(
        'DEVICE_REVOKED',
        'This device was not used for a long time and was signed out of the hub; sign in again.',
      );
    }
    if (session.expiredDate <= now) throw new ApiError('SESSION_EXPIRED');
    if (now - session.lastSeen >= Math.min(DEVICE_TOUCH_INTERVAL_MS, idleMs / 4))
      void this.users.touchSession(sessionHash, now).catch(() => {});
    return { user, session, sessionHash };
  }

  idleExpiresAt(session: SessionRecord): number {
    const idleMs = session.kind === 'device' ? this.config.deviceIdleMs : this.config.sessionIdleMs;
    return Math.min(session.expiredDate, Math.max(session.lastSeen, this.now()) + idleMs);
  }

  /** Ends the caller's session; signing out with a device token revokes that device. */
  async signOut(auth: Authenticated): Promise<void> {
    if (auth.session.kind === 'device' && auth.session.deviceId !== undefined)
      await this.users.revokeDevice(auth.session.deviceId, this.now());
    else await this.users.deleteSessions([auth.sessionHash]);
  }

  /**
   * Ends expired sessions, revokes devices idle too long and forgets stale sign-in failure
   * counts; answers the sessions ended.
   */
  async sweepExpired(): Promise<number> {
    const now = this.now();
    await this.users.pruneAttempts(now, this.config.failureWindowMs);
    await this.users.revokeIdleDevices(now, this.config.deviceIdleMs);
    return this.users.deleteExpiredSessions(now, this.config.sessionIdleMs);
  }
}
