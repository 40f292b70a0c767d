/**
 * The UserRepository contract suite (DESIGN §12): users, sessions and failed sign-ins behave the
 * same on every backend. A backend's test file calls `userRepositoryContract` with a factory that
 * makes an empty repository (and can reopen it, to check durability).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type {
  DeviceRecord,
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

function device(
  username: string,
  deviceId: string,
  replicaId: string,
  createdDate = T0,
): DeviceRecord {
  return {
    kind: 'device',
    deviceId,
    name: `${deviceId} of ${username}`,
    replicaId,
    username,
    createdDate,
    expiredDate: createdDate + 100 * 365 * 24 * 60 * MINUTE,
    lastSeen: createdDate,
  };
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

    it('clears every count under a prefix, saying whether one was blocking', async () => {
      const users = await open();
      await users.recordFailure('u:a_b|10.0.0.1', 1, MINUTE, T0);
      await users.recordFailure('u:a_b|10.0.0.2', 5, MINUTE, T0);
      // "_" is taken as itself, not as a wildcard.
      await users.recordFailure('u:axb|10.0.0.1', 1, MINUTE, T0);
      expect(await users.clearAttemptsStartingWith('u:a_b|', T0 + 1)).toBe(true);
      expect(await users.attempts('u:a_b|10.0.0.1')).toBeUndefined();
      expect(await users.attempts('u:a_b|10.0.0.2')).toBeUndefined();
      expect(await users.attempts('u:axb|10.0.0.1')).toBeDefined();
      // A block that has lapsed is not "blocking".
      expect(await users.clearAttemptsStartingWith('u:axb|', T0 + 2 * MINUTE)).toBe(false);
      expect(await users.clearAttemptsStartingWith('u:nobody|', T0)).toBe(false);
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
    it('finds a device like a session; lists, gets and revokes it; a revoked token is told apart', async () => {
      const users = await open();
      await users.insert(user('amy'));
      await users.insert(user('bob'));
      expect(await users.createDevice('d-amy', device('amy', 'dev-a', 'rep-a'))).toBe('created');
      expect(await users.createDevice('d-bob', device('bob', 'dev-b', 'rep-b', T0 + 1))).toBe(
        'created',
      );
      expect(await users.createDevice('d-amy2', device('amy', 'dev-c', 'rep-c', T0 + 2))).toBe(
        'created',
      );
      expect(await users.findSession('d-amy')).toEqual({
        session: device('amy', 'dev-a', 'rep-a'),
        user: user('amy'),
      });
      expect((await users.listDevices()).map((d) => d.deviceId)).toEqual([
        'dev-a',
        'dev-c',
        'dev-b',
      ]);
      expect(await users.listDevices('bob')).toEqual([device('bob', 'dev-b', 'rep-b', T0 + 1)]);
      expect(await users.listDevices('nobody')).toEqual([]);
      expect(await users.getDevice('dev-b')).toEqual(device('bob', 'dev-b', 'rep-b', T0 + 1));
      expect(await users.deviceOfReplica('rep-c')).toEqual(device('amy', 'dev-c', 'rep-c', T0 + 2));
      expect(await users.deviceOfReplica('rep-z')).toBeUndefined();

      await users.touchSession('d-amy', T0 + 5 * MINUTE);
      expect((await users.findSession('d-amy'))?.session.lastSeen).toBe(T0 + 5 * MINUTE);

      expect(await users.revokeDevice('dev-a', T0 + 6 * MINUTE)).toBe(true);
      expect(await users.revokeDevice('dev-a', T0 + 7 * MINUTE)).toBe(false);
      expect(await users.revokeDevice('no-such', T0)).toBe(false);
      expect(await users.findSession('d-amy')).toBeUndefined();
      expect(await users.isRevokedDevice('d-amy')).toBe(true);
      expect(await users.isRevokedDevice('d-amy2')).toBe(false);
      expect(await users.isRevokedDevice('unknown')).toBe(false);
      expect(await users.getDevice('dev-a')).toBeUndefined();
      expect(await users.deviceOfReplica('rep-a')).toBeUndefined();
      // A touch never revives a revoked device.
      await users.touchSession('d-amy', T0 + 8 * MINUTE);
      expect(await users.findSession('d-amy')).toBeUndefined();
      expect((await users.listDevices('amy')).map((d) => d.deviceId)).toEqual(['dev-c']);
    });

    it("a replica id is bound to one user's live device; the same user's new device replaces the old", async () => {
      const users = await open();
      await users.insert(user('amy'));
      await users.insert(user('bob'));
      await users.createDevice('d-1', device('amy', 'dev-1', 'rep'));
      expect(await users.createDevice('d-2', device('bob', 'dev-2', 'rep', T0 + 1))).toBe(
        'replica-taken',
      );
      expect(await users.findSession('d-2')).toBeUndefined();
      expect(await users.createDevice('d-3', device('amy', 'dev-3', 'rep', T0 + 2))).toBe(
        'created',
      );
      expect(await users.isRevokedDevice('d-1')).toBe(true);
      expect((await users.deviceOfReplica('rep'))?.deviceId).toBe('dev-3');
      expect((await users.listDevices()).map((d) => d.deviceId)).toEqual(['dev-3']);
      // Once amy's device is revoked, the replica id is free for bob.
      await users.revokeDevice('dev-3', T0 + 3);
      expect(await users.createDevice('d-4', device('bob', 'dev-4', 'rep', T0 + 4))).toBe(
        'created',
      );
    });

    it('concurrent devices of two users for one replica id: exactly one is created', async () => {
      const users = await open();
      await users.insert(user('amy'));
      await users.insert(user('bob'));
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, index) =>
          users.createDevice(
            `d-${index}`,
            device(index % 2 ? 'amy' : 'bob', `dev-${index}`, 'contested', T0 + index),
          ),
        ),
      );
      expect(new Set(results)).toEqual(new Set(['created', 'replica-taken']));
      const live = await users.listDevices();
      expect(live).toHaveLength(1);
      expect(new Set(live.map((d) => d.username)).size).toBe(1);
    });

    it('sweeps and sign-outs leave devices; a password or role change and deleting the user revoke them', async () => {
      const users = await open();
      await users.insert(user('amy'));
      await users.insert(user('bob'));
      await users.saveSession('s-amy', session('amy'));
      await users.createDevice('d-amy', device('amy', 'dev-a', 'rep-a'));
      await users.createDevice('d-amy2', device('amy', 'dev-a2', 'rep-a2'));
      await users.createDevice('d-bob', device('bob', 'dev-b', 'rep-b'));
      // Far past any session's lifetime and idle time: the session goes, the device stays.
      expect(await users.deleteExpiredSessions(T0 + 1000 * MINUTE, 30 * MINUTE)).toBe(1);
      await users.deleteSessions(['d-amy']);
      // A change that ends no sessions (allowEdit, say) keeps the devices.
      await users.update({ ...user('amy'), allowEdit: ['*'] });
      expect((await users.findSession('d-amy'))?.session.deviceId).toBe('dev-a');
      expect((await users.findSession('d-amy'))?.user.allowEdit).toEqual(['*']);

      // A password reset (or role change) revokes every live device of that user, only theirs.
      await users.update(
        { ...user('amy'), passwordHash: 'new' },
        { endSessions: true, now: T0 + 1500 * MINUTE },
      );
      expect(await users.findSession('d-amy')).toBeUndefined();
      expect(await users.findSession('d-amy2')).toBeUndefined();
      expect(await users.isRevokedDevice('d-amy')).toBe(true);
      expect(await users.listDevices('amy')).toEqual([]);
      expect((await users.findSession('d-bob'))?.session.deviceId).toBe('dev-b');

      await users.createDevice('d-amy3', device('amy', 'dev-a3', 'rep-a', T0 + 1600 * MINUTE));
      expect(await users.delete('amy', T0 + 2000 * MINUTE)).toBe(true);
      expect(await users.findSession('d-amy3')).toBeUndefined();
      expect(await users.isRevokedDevice('d-amy3')).toBe(true);
      expect(await users.listDevices('amy')).toEqual([]);
      // A new user of the same name never inherits them.
      await users.insert(user('amy'));
      expect(await users.findSession('d-amy')).toBeUndefined();
      expect(await users.listDevices('amy')).toEqual([]);
    });

    it('revokes devices unused for longer than the idle time, and only those', async () => {
      const users = await open();
      await users.insert(user('amy'));
      await users.createDevice('d-old', device('amy', 'dev-old', 'rep-1'));
      await users.createDevice('d-used', device('amy', 'dev-used', 'rep-2'));
      await users.createDevice('d-new', device('amy', 'dev-new', 'rep-3', T0 + 50 * MINUTE));
      // The last use is stored: a device in use stays live.
      await users.touchSession('d-used', T0 + 80 * MINUTE);
      expect((await users.getDevice('dev-used'))?.lastSeen).toBe(T0 + 80 * MINUTE);
      expect(await users.revokeIdleDevices(T0 + 100 * MINUTE, 60 * MINUTE)).toBe(1);
      expect(await users.findSession('d-old')).toBeUndefined();
      expect(await users.isRevokedDevice('d-old')).toBe(true);
      expect((await users.findSession('d-used'))?.session.deviceId).toBe('dev-used');
      expect((await users.findSession('d-new'))?.session.deviceId).toBe('dev-new');
      expect((await users.listDevices()).map((d) => d.deviceId)).toEqual(['dev-used', 'dev-new']);
      expect(await users.revokeIdleDevices(T0 + 100 * MINUTE, 60 * MINUTE)).toBe(0);
    });

    it('devices are durable, revoked ones too', async () => {
      await open();
      await backend!.repository.insert(user('amy'));
      await backend!.repository.createDevice('d-live', device('amy', 'dev-live', 'rep-1'));
      await backend!.repository.createDevice('d-gone', device('amy', 'dev-gone', 'rep-2'));
      await backend!.repository.revokeDevice('dev-gone', T0 + MINUTE);
      const reopened = await backend!.reopen();
      expect(await reopened.findSession('d-live')).toEqual({
        session: device('amy', 'dev-live', 'rep-1'),
        user: user('amy'),
      });
      expect(await reopened.isRevokedDevice('d-gone')).toBe(true);
    });
  });
}
