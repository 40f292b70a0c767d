import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { DesktopSession } from '../preload/api';

/** The local owner's username: the person at this computer, an admin of their own data. */
export const OWNER_USERNAME = 'owner';

/**
 * A password nobody knows: the owner never needs one on this computer (the shell signs the
 * window in) and sets a real one in Settings before signing in from elsewhere on the LAN.
 */
export function unknowablePassword(): string {
  return randomBytes(32).toString('base64url');
}

type OwnerApp = Pick<FastifyInstance, 'userRepository' | 'userService'>;

/**
 * Makes sure the owner account exists and is an admin of everything. The data directory may
 * come from a headless server (PORTFOLIO_DATA_DIR) whose admin made an "owner" with less
 * power: whoever runs the desktop app on the folder controls its files anyway.
 */
export async function ensureOwner(app: OwnerApp, username = OWNER_USERNAME): Promise<string> {
  const existing = app.userRepository.get(username);
  if (!existing) {
    await app.userService.create({
      username,
      password: unknowablePassword(),
      role: 'admin',
      allowEdit: ['*'],
    });
  } else if (existing.role !== 'admin' || !existing.allowEdit.includes('*')) {
    await app.userService.update(username, { role: 'admin', allowEdit: ['*'] });
  }
  return username;
}

type SessionApp = Pick<FastifyInstance, 'sessions'>;

/**
 * Hands the window a session of the owner without a password. The same session is reused while
 * it is valid; after it ends (lifetime, idle time, a password change) the next call opens a new
 * one, so the renderer recovers from a 401 by asking again.
 */
export class OwnerSessions {
  private current: DesktopSession | null = null;
  private opening: Promise<DesktopSession> | null = null;

  constructor(
    private readonly app: SessionApp,
    readonly username: string,
  ) {}

  async get(): Promise<DesktopSession> {
    if (this.current && this.isValid(this.current.sessionId)) return this.current;
    // Concurrent callers (two renderer requests after one 401) share one new session.
    this.opening ??= this.app.sessions
      .open(this.username)
      .then((session) => {
        this.current = { ...session, username: this.username };
        return this.current;
      })
      .finally(() => {
        this.opening = null;
      });
    return this.opening;
  }

  private isValid(sessionId: string): boolean {
    try {
      return this.app.sessions.authenticate(sessionId).user.username === this.username;
    } catch {
      return false;
    }
  }
}
