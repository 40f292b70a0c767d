import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  DeviceRecord,
  SessionRecord,
  UserRecord,
} from '../../../server/repositories/user-repository-contract';
import { CHANGES_CHANNEL } from '../../../server/storage/postgres/change-listener';
import { openDatabase, type Database } from '../../../server/storage/postgres/database';
import { PgUserRepository } from '../../../server/storage/postgres/pg-user-repository';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../../helpers/postgres';

/*
 * What PgUserRepository tells the other instances (docs/deploy.md, "The changes channel"): every
 * write that ends a session or device or changes a user sends one notice on CHANGES_CHANNEL
 * naming it, and only when it changed something. Heard on a real LISTEN connection.
 */
const unavailable = await postgresUnavailable('session notices on PostgreSQL');

const T0 = Date.UTC(2026, 0, 1);
const HOUR = 3_600_000;

const user = (username: string): UserRecord => ({
  username,
  role: 'editor',
  allowEdit: ['*'],
  passwordHash: 'scrypt$x',
  createdTime: T0,
  modifiedTime: T0,
});
const session = (username: string, lastSeen = T0): SessionRecord => ({
  username,
  createdDate: T0,
  expiredDate: T0 + 12 * HOUR,
  lastSeen,
});
const device = (username: string, deviceId: string, replicaId: string): DeviceRecord => ({
  ...session(username),
  kind: 'device',
  deviceId,
  name: deviceId,
  replicaId,
  expiredDate: T0 + 1000 * HOUR,
});

describe.skipIf(unavailable)('PgUserRepository: notices on the changes channel', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let users: PgUserRepository;
  let listener: pg.Client;
  const heard: unknown[] = [];

  beforeAll(async () => {
    testDatabase = await createTestDatabase();
    database = await openDatabase(testDatabase.url);
    users = new PgUserRepository(database.pool);
    listener = new pg.Client(testDatabase.url);
    await listener.connect();
    listener.on('notification', (message) => heard.push(JSON.parse(message.payload!)));
    await listener.query(`LISTEN ${CHANGES_CHANNEL}`);
    for (const name of ['ann', 'bob', 'cy']) await users.insert(user(name));
  });

  afterAll(async () => {
    await listener?.end();
    await database?.close();
    await testDatabase?.drop();
  });

  /**
   * The notices `action` sent: a marker is sent after it (notices arrive in commit order), so
   * everything heard before the marker is the action's, and nothing more can come.
   */
  async function noticesOf(action: () => Promise<unknown>): Promise<unknown[]> {
    heard.length = 0;
    await action();
    await database.pool.query('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, '"marker"']);
    await expect.poll(() => heard.at(-1)).toBe('marker');
    return heard.slice(0, -1);
  }

  it('sign-outs and sweeps name the sessions they ended; new sessions and touches are silent', async () => {
    expect(await noticesOf(() => users.saveSession('s1', session('ann')))).toEqual([]);
    await users.saveSession('s2', session('ann'));
    expect(await noticesOf(() => users.touchSession('s1', T0 + 60_000))).toEqual([]);
    expect(await noticesOf(() => users.deleteSessions(['s1', 'nothing']))).toEqual([
      { kind: 'sessions', hashes: ['s1'] },
    ]);
    expect(await noticesOf(() => users.deleteSessions(['s1']))).toEqual([]);
    expect(await noticesOf(() => users.deleteExpiredSessions(T0 + 24 * HOUR, HOUR))).toEqual([
      { kind: 'sessions', hashes: ['s2'] },
    ]);
    expect(await noticesOf(() => users.deleteExpiredSessions(T0 + 24 * HOUR, HOUR))).toEqual([]);
  });

  it('a sweep of more sessions than one notice may name says "all sessions"', async () => {
    for (let index = 0; index < 101; index++) await users.saveSession(`x${index}`, session('bob'));
    expect(await noticesOf(() => users.deleteExpiredSessions(T0 + 24 * HOUR, HOUR))).toEqual([
      { kind: 'all-sessions' },
    ]);
  });

  it('a change or deletion of a user names the user, only when there was one', async () => {
    const changed = { ...user('bob'), role: 'viewer' as const };
    expect(await noticesOf(() => users.update(changed, { endSessions: true }))).toEqual([
      { kind: 'user', username: 'bob' },
    ]);
    expect(await noticesOf(() => users.update(changed))).toEqual([
      { kind: 'user', username: 'bob' },
    ]);
    expect(await noticesOf(() => users.update(user('nobody')))).toEqual([]);
    let deleted: boolean | undefined;
    expect(
      await noticesOf(async () => {
        deleted = await users.delete('bob', T0);
      }),
    ).toEqual([{ kind: 'user', username: 'bob' }]);
    expect(deleted).toBe(true);
    expect(await noticesOf(async () => (deleted = await users.delete('bob', T0)))).toEqual([]);
    expect(deleted).toBe(false);
  });

  it('a revoked or replaced device names its token', async () => {
    expect(await noticesOf(() => users.createDevice('d1', device('cy', 'dev-1', 'r1')))).toEqual(
      [],
    );
    expect(await noticesOf(() => users.createDevice('d2', device('cy', 'dev-2', 'r1')))).toEqual([
      { kind: 'sessions', hashes: ['d1'] },
    ]);
    let revoked: boolean | undefined;
    expect(await noticesOf(async () => (revoked = await users.revokeDevice('dev-2', T0)))).toEqual([
      { kind: 'sessions', hashes: ['d2'] },
    ]);
    expect(revoked).toBe(true);
    expect(await noticesOf(async () => (revoked = await users.revokeDevice('dev-2', T0)))).toEqual(
      [],
    );
    expect(revoked).toBe(false);
  });
});
