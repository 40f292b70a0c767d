import { describe, expect, it } from 'vitest';
import type {
  SessionLookup,
  SessionRecord,
} from '../../server/repositories/user-repository-contract';
import { SessionCache } from '../../server/storage/postgres/session-cache';

/* The per-instance session cache of the PostgreSQL backend, on its own (a clock of the test's). */

const SECOND = 1000;
const IDLE = 60 * SECOND;

function lookup(username: string, session: Partial<SessionRecord> = {}): SessionLookup {
  return {
    session: { username, createdDate: 0, expiredDate: 3600 * SECOND, lastSeen: 0, ...session },
    user: {
      username,
      role: 'editor',
      allowEdit: ['*'],
      passwordHash: 'scrypt$x',
      createdTime: 0,
      modifiedTime: 0,
    },
  };
}

function listeningCache(ttlMs = 5 * SECOND) {
  const clock = { now: 0 };
  const cache = new SessionCache({ ttlMs, idleMs: IDLE, now: () => clock.now, maxEntries: 3 });
  cache.listening();
  return { cache, clock };
}

describe('SessionCache', () => {
  it('answers a remembered session until its time limit, then asks the database again', () => {
    const { cache, clock } = listeningCache();
    cache.remember(cache.ticket(), 'h1', lookup('ann'));
    expect(cache.get('h1')?.user.username).toBe('ann');
    clock.now = 4_999;
    expect(cache.get('h1')).toBeDefined();
    clock.now = 5_000;
    expect(cache.get('h1')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('never answers a session past its lifetime or its idle time; a touch moves the idle end', () => {
    const { cache, clock } = listeningCache(10 * IDLE);
    cache.remember(cache.ticket(), 'ends', lookup('ann', { expiredDate: 30 * SECOND }));
    cache.remember(cache.ticket(), 'idles', lookup('bob'));
    cache.remember(cache.ticket(), 'device', lookup('cy', { kind: 'device', expiredDate: 1e12 }));
    clock.now = 30 * SECOND;
    expect(cache.get('ends')).toBeUndefined();
    cache.touched('idles', 30 * SECOND);
    clock.now = IDLE + 10 * SECOND;
    expect(cache.get('idles')?.session.lastSeen).toBe(30 * SECOND);
    clock.now = 30 * SECOND + IDLE;
    expect(cache.get('idles')).toBeUndefined();
    expect(cache.get('device')).toBeDefined(); // devices never expire by idleness
  });

  it('does not keep a read that was under way while something was dropped', () => {
    const { cache } = listeningCache();
    const before = cache.ticket();
    cache.dropSessions(['other']);
    cache.remember(before, 'h1', lookup('ann'));
    expect(cache.get('h1')).toBeUndefined();
    cache.remember(cache.ticket(), 'h1', lookup('ann'));
    expect(cache.get('h1')).toBeDefined();
  });

  it('drops what a notice names: sessions, every session of a user, or all', () => {
    const { cache } = listeningCache();
    cache.remember(cache.ticket(), 'a1', lookup('ann'));
    cache.remember(cache.ticket(), 'a2', lookup('ann'));
    cache.remember(cache.ticket(), 'b1', lookup('bob'));
    cache.notice({ kind: 'sessions', hashes: ['a1', 'unknown'] });
    expect([cache.get('a1'), cache.get('a2'), cache.get('b1')].map(Boolean)).toEqual([
      false,
      true,
      true,
    ]);
    cache.notice({ kind: 'user', username: 'ann' });
    expect([cache.get('a2'), cache.get('b1')].map(Boolean)).toEqual([false, true]);
    cache.notice({ kind: 'portfolios' } as never); // a kind for another cache: ignored
    expect(cache.get('b1')).toBeDefined();
    cache.notice({ kind: 'all-sessions' });
    expect(cache.size).toBe(0);
  });

  it('while not listening it is empty and remembers nothing; listening again starts empty', () => {
    const { cache } = listeningCache();
    cache.remember(cache.ticket(), 'h1', lookup('ann'));
    const during = cache.ticket();
    cache.lost();
    expect(cache.get('h1')).toBeUndefined();
    cache.remember(cache.ticket(), 'h2', lookup('ann'));
    cache.remember(during, 'h3', lookup('ann'));
    expect(cache.size).toBe(0);
    cache.listening();
    cache.remember(during, 'h3', lookup('ann')); // read before listening again: not kept
    expect(cache.size).toBe(0);
    cache.remember(cache.ticket(), 'h4', lookup('ann'));
    expect(cache.get('h4')).toBeDefined();
  });

  it('forgets the least recently used beyond its size, and a user drop still finds the rest', () => {
    const { cache } = listeningCache();
    for (const hash of ['h1', 'h2', 'h3']) cache.remember(cache.ticket(), hash, lookup('ann'));
    cache.get('h1');
    cache.remember(cache.ticket(), 'h4', lookup('ann'));
    expect(cache.size).toBe(3);
    expect(cache.get('h2')).toBeUndefined();
    cache.dropUser('ann');
    expect(cache.size).toBe(0);
  });
});
