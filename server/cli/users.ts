import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { text } from 'node:stream/consumers';
import { UpdateUserBodySchema, type User } from '../../shared';
import type { UserService } from '../services/user-service';
import type { UserRepository } from '../repositories/user-repository-contract';
// Static: serve imports it too, so it is in the CLI's chunk whatever this file does.
import { resolveConfig } from '../config';
import { ApiError } from '../errors';
import { DataDirInUseError } from '../storage/embedded/data-dir-lock';
import type { Database } from '../storage/postgres/database';
import type { Store } from '../storage/embedded/store';
import {
  CommandFailed,
  DATA_DIR_FLAG,
  EXIT,
  UsageError,
  print,
  type Command,
  type CommandInput,
  type Flag,
} from './command';
import { DatabaseUnusable } from './serve';
import { requireLibrary } from './library-dir';

/** Where the users are: which backend, and what that means for a server running meanwhile. */
const WHERE_NOTES =
  'With --data-dir (the embedded store): works only on a data directory no server is using; stop\n' +
  'the server (or quit the desktop app) first. With --database (PostgreSQL): works while servers\n' +
  'run, as they share the database (several instances may); --data-dir is then not used.';

/** `--database`, as `serve` takes it; here the users are read and changed in place. */
const DATABASE_FLAG: Flag = {
  name: 'database',
  value: '<url>',
  env: 'PORTFOLIO_DATABASE_URL',
  description: 'PostgreSQL, as "serve --database" takes it: postgres://user@host:5432/name',
};

type UseUsers<T> = (users: UserService, repository: UserRepository) => Promise<T>;

/**
 * Runs `use` with the users of the deployment named on the command line: a PostgreSQL database
 * (`--database`), else the data directory (`--data-dir`, default ./data).
 */
async function withUsers<T>(input: CommandInput, use: UseUsers<T>): Promise<T> {
  const url = input.option('database') || undefined;
  return url === undefined ? withDataDirUsers(input, use) : withDatabaseUsers(url, use);
}

/**
 * The users of a stopped data directory: the store is opened as the server opens it, under the
 * data-directory lock, and closed (writes flushed, lock released) after.
 */
async function withDataDirUsers<T>(input: CommandInput, use: UseUsers<T>): Promise<T> {
  const dataDir = resolve(input.option('data-dir') ?? 'data');
  await requireLibrary(dataDir);
  // Loaded only now: help and command-line errors answer without loading the storage.
  const [{ Store }, { EmbeddedUserRepository }, { UserService }] = await Promise.all([
    import('../storage/embedded/store'),
    import('../storage/embedded/embedded-user-repository'),
    import('../services/user-service'),
  ]);
  let store: Store;
  try {
    store = await Store.open({
      dataDir,
      log: {
        info: () => {},
        warn: (message) => process.stderr.write(`warning: ${message}\n`),
        error: (_detail, message) => process.stderr.write(`error: ${message}\n`),
      },
    });
  } catch (error) {
    if (error instanceof DataDirInUseError) throw new CommandFailed(error.message);
    throw error;
  }
  try {
    const repository = new EmbeddedUserRepository(store);
    // The server's hashing settings, so a password set here costs what one set under Users does.
    return await use(new UserService(repository, resolveConfig({ dataDir }).auth), repository);
  } finally {
    await store.close();
  }
}

/**
 * The users of a PostgreSQL database, which running servers may share: every change is one
 * statement there, seen by every instance at once. A database the application never set up is
 * refused (not given the schema: a mistyped URL must not start a new deployment); one of an
 * older schema is brought up to date as `serve` would.
 */
async function withDatabaseUsers<T>(url: string, use: UseUsers<T>): Promise<T> {
  if (!/^postgres(ql)?:\/\//i.test(url) || !URL.canParse(url))
    // Never echo the URL: it may hold a password.
    throw new UsageError('--database must be a postgres:// URL');
  const [database, { PgUserRepository }, { UserService }] = await Promise.all([
    import('../storage/postgres/database'),
    import('../storage/postgres/pg-user-repository'),
    import('../services/user-service'),
  ]);
  let opened: Database;
  try {
    opened = await database.openDatabase(url, { poolSize: 2, mustExist: true });
  } catch (error) {
    if (error instanceof database.DatabaseNotSetUpError) throw new CommandFailed(error.message);
    if (
      error instanceof database.DatabaseConnectError ||
      error instanceof database.DatabaseSchemaTooNewError
    )
      throw new DatabaseUnusable(error.message);
    throw error;
  }
  try {
    const repository = new PgUserRepository(opened.pool);
    const { auth } = resolveConfig({ dataDir: resolve('data'), database: url });
    return await use(new UserService(repository, auth), repository);
  } catch (error) {
    // The database went away after the start: the same one line as an unreachable one.
    const reason = error instanceof CommandFailed ? undefined : database.connectionFailure(error);
    if (reason === undefined) throw error;
    throw new DatabaseUnusable(new database.DatabaseConnectError(opened.target, reason).message);
  } finally {
    await opened.close();
  }
}

function userTable(users: User[]): string {
  const rows = [
    ['USERNAME', 'ROLE', 'MAY EDIT'],
    ...users.map((user) => [user.username, user.role, user.allowEdit.join(', ') || '-']),
  ];
  const widths = [0, 1].map((column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map(
      ([name, role, edit]) =>
        `${name!.padEnd(widths[0]! + 2)}${role!.padEnd(widths[1]! + 2)}${edit}`,
    )
    .join('\n');
}

export const usersListCommand: Command = {
  name: 'users list',
  summary: 'List the accounts of a data directory or a PostgreSQL database.',
  flags: [
    DATA_DIR_FLAG,
    DATABASE_FLAG,
    { name: 'json', description: 'print a JSON array instead of a table' },
  ],
  notes: `${WHERE_NOTES}\nOn a running server, an admin lists users with GET /api/v1/users.`,
  async run(input) {
    const users = await withUsers(input, async (service) => service.list());
    print(input.flag('json') ? JSON.stringify(users, null, 2) : userTable(users));
    return EXIT.ok;
  },
};

const PASSWORD_LIMITS = UpdateUserBodySchema.properties.password;

/** The new password and whether it was made here (then it is printed, once). */
async function newPassword(input: CommandInput): Promise<{ password: string; generated: boolean }> {
  let password: string | undefined;
  if (input.flag('password-stdin')) {
    // Everything piped in; the line break an `echo` or a terminal adds is not part of it.
    password = (await text(process.stdin)).replace(/\r?\n$/, '');
  } else {
    password = input.env.PORTFOLIO_NEW_PASSWORD;
  }
  if (password === undefined)
    return { password: randomBytes(12).toString('base64url'), generated: true };
  const { minLength = 0, maxLength = Infinity } = PASSWORD_LIMITS;
  if (password.length < minLength || password.length > maxLength)
    throw new UsageError(
      `the new password must be ${minLength} to ${maxLength} characters, not ${password.length}`,
    );
  return { password, generated: false };
}

export const usersResetPasswordCommand: Command = {
  name: 'users reset-password',
  args: '<username>',
  summary: 'Set a new password: the way back in for a locked-out admin.',
  flags: [
    DATA_DIR_FLAG,
    DATABASE_FLAG,
    { name: 'password-stdin', description: 'read the new password from standard input' },
  ],
  env: [
    {
      name: 'PORTFOLIO_NEW_PASSWORD',
      description: 'the new password (without either, one is generated and printed once)',
    },
  ],
  notes:
    `${WHERE_NOTES}\n` +
    "The account's sessions end (on PostgreSQL on every instance at once: sessions live in the\n" +
    'database); its role and categories stay as they are.\n' +
    'Example: printf %s "$NEW" | portfolio users reset-password admin --password-stdin',
  async run(input) {
    const username = input.positionals[0]!;
    const { password, generated } = await newPassword(input);
    await withUsers(input, async (service, repository) => {
      try {
        await service.update(username, { password });
      } catch (error) {
        if (!(error instanceof ApiError && error.code === 'USER_NOT_FOUND')) throw error;
        const names = (await repository.list()).map((user) => user.username);
        throw new CommandFailed(
          `no user named "${username}"; the users are: ${names.join(', ') || 'none'}`,
        );
      }
    });
    print(`The password of "${username}" is reset; their sessions have ended.`);
    if (generated) print(`New password (shown only this once): ${password}`);
    return EXIT.ok;
  },
};
