import { createHash, randomBytes } from 'node:crypto';
import { Lru } from '../lib/lru';

/** How long an action can be undone. */
export const UNDO_LIFETIME_MS = 60 * 60 * 1000;
/** Undo tokens kept at most (the oldest go first): a bound on memory, not a limit users meet. */
const MAX_TOKENS = 10_000;

interface Held<T> {
  username: string;
  expires: number;
  steps: T[];
}

/**
 * What an action's undo needs, behind a token (DESIGN §16): 256 random bits, kept only as their
 * SHA-256, usable once, by the user it was given to, for UNDO_LIFETIME_MS. Kept in memory: a
 * restart (or another instance behind a load balancer) forgets them, and the undo answers 404.
 */
export class UndoTokens<T> {
  private readonly held = new Lru<Held<T>>(MAX_TOKENS);

  constructor(private readonly now: () => number = Date.now) {}

  issue(username: string, steps: T[]): string {
    const token = randomBytes(32).toString('base64url');
    this.held.put(hash(token), { username, expires: this.now() + UNDO_LIFETIME_MS, steps });
    return token;
  }

  /** The steps behind `token` if it is `username`'s and alive; it is spent either way. */
  take(username: string, token: string): T[] | undefined {
    const key = hash(token);
    const held = this.held.get(key);
    if (!held || held.username !== username) return undefined;
    this.held.delete(key);
    return held.expires > this.now() ? held.steps : undefined;
  }
}

function hash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
