import { Lru } from '../../lib/lru';
import type { SessionLookup } from '../../repositories/user-repository-contract';
import type { ChangeNotice, ChangeSubscriber } from './change-listener';

export interface SessionCacheOptions {
  /** How long a session read from the database may be answered from memory, at most. */
  ttlMs: number;
  /** The configured idle time: an entry is never served once its session could look idle. */
  idleMs: number;
  /** Sessions remembered at most (least recently used forgotten first). Default 10 000. */
  maxEntries?: number;
  now?: () => number;
}

interface Entry {
  lookup: SessionLookup;
  /** Served until then at most (read time + ttl). */
  freshUntil: number;
}

/**
 * Sessions (with their user) found in the database, remembered by one instance for a few seconds
 * so that a request needs no round trip to learn who is calling. It is kept right by the changes
 * channel (ChangeListener): a notice drops the sessions or the user it names; while the channel is
 * not listening the cache is empty and answers nothing, so a missed notice cannot leave a session
 * ended elsewhere usable. `ttlMs` bounds the staleness even so (a notice lost without the
 * connection seeming lost).
 *
 * A read that was under way while something was dropped is not remembered (an epoch counts
 * drops): it may have seen the database before the change that caused the drop.
 */
export class SessionCache implements ChangeSubscriber {
  private readonly entries: Lru<Entry>;
  private readonly byUser = new Map<string, Set<string>>();
  private epoch = 0;
  private active = false;
  private readonly now: () => number;

  constructor(private readonly options: SessionCacheOptions) {
    this.now = options.now ?? Date.now;
    this.entries = new Lru<Entry>(options.maxEntries ?? 10_000, (hash, entry) =>
      this.unindex(hash, entry),
    );
  }

  /** How many sessions are remembered (for tests). */
  get size(): number {
    return this.entries.size;
  }

  /** The remembered lookup, or undefined: then read the database (see `ticket`). */
  get(hash: string): SessionLookup | undefined {
    const entry = this.entries.use(hash);
    if (entry === undefined) return undefined;
    const { session } = entry.lookup;
    // Never past the point where the session could have ended by itself: the database decides.
    const servedUntil = Math.min(
      entry.freshUntil,
      session.expiredDate,
      session.kind === 'device' ? Infinity : session.lastSeen + this.options.idleMs,
    );
    if (this.now() < servedUntil) return entry.lookup;
    this.remove(hash);
    return undefined;
  }

  /** Taken before reading the database; `remember` keeps the answer only if nothing was dropped since. */
  ticket(): number {
    return this.active ? this.epoch : -1;
  }

  remember(ticket: number, hash: string, lookup: SessionLookup): void {
    if (!this.active || ticket !== this.epoch || this.options.ttlMs <= 0) return;
    this.remove(hash);
    this.entries.put(hash, { lookup, freshUntil: this.now() + this.options.ttlMs });
    const hashes = this.byUser.get(lookup.user.username);
    if (hashes) hashes.add(hash);
    else this.byUser.set(lookup.user.username, new Set([hash]));
  }

  /** The session was used now (and written down): the remembered copy says so too. */
  touched(hash: string, lastSeen: number): void {
    const entry = this.entries.get(hash);
    if (entry === undefined || entry.lookup.session.lastSeen >= lastSeen) return;
    const session = { ...entry.lookup.session, lastSeen };
    entry.lookup = { ...entry.lookup, session };
  }

  dropSessions(hashes: readonly string[]): void {
    this.epoch++;
    for (const hash of hashes) this.remove(hash);
  }

  dropUser(username: string): void {
    this.epoch++;
    for (const hash of this.byUser.get(username) ?? []) this.remove(hash);
  }

  clear(): void {
    this.epoch++;
    this.entries.clear();
    this.byUser.clear();
  }

  notice(notice: ChangeNotice): void {
    if (notice.kind === 'sessions' && Array.isArray(notice.hashes))
      this.dropSessions(notice.hashes);
    else if (notice.kind === 'user' && typeof notice.username === 'string')
      this.dropUser(notice.username);
    else if (notice.kind === 'all-sessions') this.clear();
  }

  lost(): void {
    this.active = false;
    this.clear();
  }

  listening(): void {
    // Notices sent while not listening are lost: start from nothing.
    this.clear();
    this.active = true;
  }

  private remove(hash: string): void {
    const entry = this.entries.get(hash);
    if (entry === undefined) return;
    this.entries.delete(hash);
    this.unindex(hash, entry);
  }

  private unindex(hash: string, entry: Entry): void {
    const username = entry.lookup.user.username;
    const hashes = this.byUser.get(username);
    hashes?.delete(hash);
    if (hashes?.size === 0) this.byUser.delete(username);
  }
}
