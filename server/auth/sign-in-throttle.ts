interface Attempts {
  failures: number;
  windowStart: number;
  blockedUntil: number;
}

/**
 * Counts failed sign-ins per (address, username) and per address, and blocks further attempts
 * for a while once either passes its limit. Memory is bounded by pruning stale entries.
 */
export class SignInThrottle {
  private readonly attempts = new Map<string, Attempts>();

  constructor(
    private readonly maxFailures: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  private keys(address: string, username: string): Array<[string, number]> {
    // Per address, allow a few usernames' worth before blocking the address itself.
    return [
      [`u:${address}|${username.toLowerCase()}`, this.maxFailures],
      [`a:${address}`, this.maxFailures * 4],
    ];
  }

  /** Milliseconds until the caller may try again, or 0 when it may try now. */
  retryAfter(address: string, username: string): number {
    const now = this.now();
    let wait = 0;
    for (const [key] of this.keys(address, username)) {
      const entry = this.attempts.get(key);
      if (entry && entry.blockedUntil > now) wait = Math.max(wait, entry.blockedUntil - now);
    }
    return wait;
  }

  recordFailure(address: string, username: string): void {
    const now = this.now();
    if (this.attempts.size > 10_000) this.prune(now);
    for (const [key, limit] of this.keys(address, username)) {
      let entry = this.attempts.get(key);
      if (!entry || now - entry.windowStart > this.windowMs) {
        entry = { failures: 0, windowStart: now, blockedUntil: 0 };
        this.attempts.set(key, entry);
      }
      entry.failures += 1;
      if (entry.failures >= limit) entry.blockedUntil = now + this.windowMs;
    }
  }

  recordSuccess(address: string, username: string): void {
    this.attempts.delete(this.keys(address, username)[0]![0]);
  }

  private prune(now: number): void {
    for (const [key, entry] of this.attempts) {
      if (entry.blockedUntil < now && now - entry.windowStart > this.windowMs)
        this.attempts.delete(key);
    }
  }
}
