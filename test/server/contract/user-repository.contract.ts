/**
 * The UserRepository contract suite (DESIGN §12): users, sessions and failed sign-ins behave the
 * same on every backend. A backend's test file calls `userRepositoryContract` with a factory that
 * makes an empty repository (and can reopen it, to check durability).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type {
  SessionRecord,
  UserRecord,
  UserRepository,
} from '../../../server/repositories/user-repository-contract';

export interface UserContractBackend {
  repository: UserRepository;
  /** Closes the repository and opens it again from what is durable. */
  reopen(): Promise<UserRepository>;
  destroy(): Promise<void>;
}

const T0 = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;

function user(username: string, role: UserRecord['role'] = 'editor'): UserRecord {
  return {
    username,
    role,
    allowEdit: ['Interior'],
    passwordHash: `scrypt$${username}`,
    createdTime: T0,
    modifiedTime: T0,
  };
}

function session(username: string, createdDate = T0): SessionRecord {
  return { username, createdDate, expiredDate: createdDate + 60 * MINUTE, lastSeen: createdDate };
}

export function userRepositoryContract(
  name: string,
  factory: () => Promise<UserContractBackend>,
): void {
  describe(`UserRepository contract: ${name}`, () => {
    let backend: UserContractBackend | undefined;
    const open = async () => {
      backend = await factory();
      return backend.repository;
    };
    afterEach(async () => {
      await backend?.destroy();
      backend = undefined;
    });

    it('adds users once: a taken username is refused and nothing changes', async () => {
      const users = await open();
      expect(await users.insert(user('zoe', 'admin'))).toBe(true);
      expect(await users.insert(user('amy'))).toBe(true);
      expect(await users.insert({ ...user('amy', 'admin'), passwordHash: 'other' })).toBe(false);
      expect(await users.get('amy')).toEqual(user('amy'));
      expect(await users.get('nobody')).toBeUndefined();
      expect((await users.list()).map((u) => u.username)).toEqual(['amy', 'zoe']);
      expect(await users.count()).toBe(2);
      expect(await users.countAdmins()).toBe(1);
    });

    it('concurrent inserts of one username: exactly one succeeds', async () => {
      const users = await open();
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, index) =>
          users.insert({ ...user('same'), passwordHash: `hash-${index}` }),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await users.count()).toBe(1);
    });

    it('an update ends the sessions of that user only when told to', async () => {
      const users = await open();
      await users.insert(user('amy'));
      await users.insert(user('bob'));
      await users.saveSession('h-amy-1', session('amy'));
      await users.saveSession('h-amy-2', session('amy'));
      await users.saveSession('h-bob', session('bob'));
      await users.update({ ...user('amy'), allowEdit: ['*'], modifiedTime: T0 + 1 });
      expect((await users.findSession('h-amy-1'))?.user.allowEdit).toEqual(['*']);
      await users.update({ ...user('amy', 'viewer') }, { endSessions: true });
      expect(await users.findSession('h-amy-1')).toBeUndefined();
      expect(await users.findSession('h-amy-2')).toBeUndefined();
      expect((await users.get('amy'))?.role).toBe('viewer');
      expect(await users.findSession('h-bob')).toEqual({
        session: session('bob'),
        user: user('bob'),
      });
    });

    it('deleting a user ends their sessions; deleting an unknown one answers false', async () => {
      const users = await open();
      await users.insert(user('amy'));
      await users.saveSession('h-amy', session('amy'));
      expect(await users.delete('amy')).toBe(true);
      expect(await users.findSession('h-amy')).toBeUndefined();
      expect(await users.get('amy')).toBeUndefined();
      expect(await users.delete('amy')).toBe(false);
    });

    it('sessions: found with their user, touched, ended; a touch never brings one back', async () => {
      const users = await open();
      await users.insert(user('amy'));
      await users.saveSession('h1', session('amy'));
      expect(await users.findSession('h1')).toEqual({ session: session('amy'), user: user('amy') });
      await users.touchSession('h1', T0 + 5 * MINUTE);
      expect((await users.findSession('h1'))?.session.lastSeen).toBe(T0 + 5 * MINUTE);
      await users.touchSession('h1', T0 + MINUTE); // older: ignored
      expect((await users.findSession('h1'))?.session.lastSeen).toBe(T0 + 5 * MINUTE);
      await users.deleteSessions(['h1']);
      await users.touchSession('h1', T0 + 6 * MINUTE);
      expect(await users.findSession('h1')).toBeUndefined();
    });

    it('sweeps sessions past their lifetime or idle too long, and only those', async () => {
      const users = await open();
      await users.insert(user('amy'));
      await users.saveSession('fresh', { ...session('amy'), lastSeen: T0 + 50 * MINUTE });
      await users.saveSession('idle', session('amy'));
      await users.saveSession('old', {
        ...session('amy'),
        expiredDate: T0 + 55 * MINUTE,
        lastSeen: T0 + 54 * MINUTE,
      });
      const swept = await users.deleteExpiredSessions(T0 + 55 * MINUTE, 30 * MINUTE);
      expect(swept).toBe(2);
      expect(await users.findSession('fresh')).toBeDefined();
      expect(await users.findSession('idle')).toBeUndefined();
      expect(await users.findSession('old')).toBeUndefined();
    });

    it('counts failed sign-ins: blocks at the limit, starts again after the window, clears', async () => {
      const users = await open();
      const window = 15 * MINUTE;
      for (let index = 0; index < 2; index++) await users.recordFailure('k', 3, window, T0);
      expect(await users.attempts('k')).toEqual({ failures: 2, windowStart: T0, blockedUntil: 0 });
      await users.recordFailure('k', 3, window, T0 + MINUTE);
      expect(await users.attempts('k')).toEqual({
        failures: 3,
        windowStart: T0,
        blockedUntil: T0 + MINUTE + window,
      });
      // A failure after the window starts counting again.
      await users.recordFailure('k', 3, window, T0 + window + 2 * MINUTE);
      expect(await users.attempts('k')).toEqual({
        failures: 1,
        windowStart: T0 + window + 2 * MINUTE,
        blockedUntil: 0,
      });
      await users.clearAttempts('k');
      expect(await users.attempts('k')).toBeUndefined();
    });

    it('concurrent failures all count', async () => {
      const users = await open();
      await Promise.all(
        Array.from({ length: 20 }, () => users.recordFailure('busy', 100, MINUTE, T0)),
      );
      expect((await users.attempts('busy'))?.failures).toBe(20);
    });

    it('prunes counts whose window and block are over', async () => {
      const users = await open();
      await users.recordFailure('stale', 5, MINUTE, T0);
      await users.recordFailure('blocked', 1, MINUTE, T0 + 2 * MINUTE);
      expect(await users.pruneAttempts(T0 + 2 * MINUTE + 1, MINUTE)).toBe(1);
      expect(await users.attempts('stale')).toBeUndefined();
      expect(await users.attempts('blocked')).toBeDefined();
    });

    it('users and sessions are durable', async () => {
      await open();
      await backend!.repository.insert(user('amy', 'admin'));
      await backend!.repository.saveSession('h', session('amy'));
      const reopened = await backend!.reopen();
      expect(await reopened.get('amy')).toEqual(user('amy', 'admin'));
      expect(await reopened.findSession('h')).toEqual({
        session: session('amy'),
        user: user('amy', 'admin'),
      });
    });
  });
}
