import type { UserRepository } from '../repositories/user-repository-contract';

/**
 * Counts failed sign-ins per (address, username) and per address, and blocks further attempts
 * for a while once either passes its limit. The counts live in the user repository, so on
 * PostgreSQL every instance counts the same attempts.
 */
export class SignInThrottle {
  constructor(
    private readonly users: Pick<
      UserRepository,
      'attempts' | 'recordFailure' | 'clearAttempts' | 'clearAttemptsStartingWith'
    >,
    private readonly maxFailures: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  private keys(address: string, username: string): Array<[string, number]> {
    // Per address, allow a few usernames' worth before blocking the address itself. The
    // username leads its key, so an unlock finds that user's counts from every address.
    return [
      [`${userPrefix(username)}${address}`, this.maxFailures],
      [`a:${address}`, this.maxFailures * 4],
    ];
  }

  /** Milliseconds until the caller may try again, or 0 when it may try now. */
  async retryAfter(address: string, username: string): Promise<number> {
    const now = this.now();
    let wait = 0;
    for (const [key] of this.keys(address, username)) {
      const entry = await this.users.attempts(key);
      if (entry && entry.blockedUntil > now) wait = Math.max(wait, entry.blockedUntil - now);
    }
    return wait;
  }

  async recordFailure(address: string, username: string): Promise<void> {
    const now = this.now();
    for (const [key, limit] of this.keys(address, username))
      await this.users.recordFailure(key, limit, this.windowMs, now);
  }

  recordSuccess(address: string, username: string): Promise<void> {
    return this.users.clearAttempts(this.keys(address, username)[0]![0]);
  }

  /**
   * An admin's unlock: forgets the user's failures from every address; answers whether the user
   * was locked out. An address blocked for trying many usernames stays blocked.
   */
  unlock(username: string): Promise<boolean> {
    return this.users.clearAttemptsStartingWith(userPrefix(username), this.now());
  }
}

/** "|" never occurs in a username, so one user's prefix is never another's. */
const userPrefix = (username: string) => `u:${username.toLowerCase()}|`;
