import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { backupsFromEnv, ConfigError, retentionFromEnv } from '../config';
import { DataDirInUseError } from '../storage/embedded/data-dir-lock';
import {
  DatabaseConnectError,
  DatabaseSchemaTooNewError,
  targetOf,
} from '../storage/postgres/database-errors';
import { CommandFailed, DATA_DIR_FLAG, EXIT, UsageError, print, type Command } from './command';
import { HUB_ENV, HUB_FLAG, hubOf } from './sync';

function parseCacheMegabytes(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const megabytes = Number(value);
  if (value.trim() === '' || !Number.isFinite(megabytes) || megabytes < 0)
    throw new UsageError(
      `PORTFOLIO_LIST_CACHE_MB must be a number of megabytes, 0 or more, not "${value}"`,
    );
  return Math.round(megabytes * 1024 * 1024);
}

function parseSyncInterval(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (value.trim() === '' || !Number.isFinite(seconds) || seconds < 0)
    throw new UsageError(`PORTFOLIO_SYNC_INTERVAL_S must be seconds, 0 or more, not "${value}"`);
  return Math.round(seconds * 1000);
}

/**
 * PORTFOLIO_TRUST_PROXY: `true` (any sender), or the proxies' addresses (`loopback`,
 * `10.0.0.1,10.0.0.2`, CIDR ranges), as Fastify's trustProxy takes them.
 */
function parseTrustProxy(value: string | undefined): boolean | string {
  const trimmed = value?.trim() ?? '';
  if (trimmed === '' || trimmed === 'false') return false;
  if (trimmed === 'true') return true;
  return trimmed;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535)
    throw new UsageError(`--port must be 0..65535, not "${value}"`);
  return port;
}

/**
 * History and trash retention from PORTFOLIO_HISTORY*, PORTFOLIO_TRASH_DAYS, and backups from
 * PORTFOLIO_BACKUP_*; bad values are usage errors.
 */
function retentionOf(env: NodeJS.ProcessEnv) {
  try {
    return { ...retentionFromEnv(env), backups: backupsFromEnv(env) };
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
}

/**
 * The built web UI, out/renderer under the project root: the nearest folder above this file with
 * a package.json, whether this runs from the sources (tsx) or as the build, out/server/cli.js.
 */
function builtRendererDir(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
  const rendererDir = join(dir, 'out', 'renderer');
  return existsSync(rendererDir) ? rendererDir : null;
}

/** What a person can act on when the server cannot listen; anything else as it came. */
function listenFailure(error: unknown, host: string, port: number): unknown {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'EADDRINUSE':
      return new CommandFailed(`port ${port} on ${host} is in use; choose another with --port`);
    case 'EACCES':
      return new CommandFailed(`port ${port} on ${host} needs privileges; choose one above 1023`);
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return new CommandFailed(`${host} is not an address of this machine; check --host`);
    default:
      return error;
  }
}

/** The database cannot be used (unreachable, refused, too new a schema): exit 2, one line. */
export class DatabaseUnusable extends CommandFailed {
  override readonly name = 'DatabaseUnusable';
  override readonly exitCode: number = EXIT.usage;
}

/** Stops on SIGINT/SIGTERM after pending writes are on disk. */
function closeOnSignals(app: FastifyInstance): void {
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info(`${signal} received; finishing pending writes`);
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

export const serveCommand: Command = {
  name: 'serve',
  summary: 'Run the server: the API at /api/v1, the web UI at /, the API docs at /docs.',
  flags: [
    {
      name: 'host',
      value: '<address>',
      env: 'PORTFOLIO_HOST',
      description: 'address to listen on (default 127.0.0.1; 0.0.0.0 shares on the LAN)',
    },
    {
      name: 'port',
      value: '<number>',
      env: 'PORTFOLIO_PORT',
      description: 'port (default 8080; 0 picks a free one)',
    },
    DATA_DIR_FLAG,
    {
      name: 'database',
      value: '<url>',
      env: 'PORTFOLIO_DATABASE_URL',
      description:
        'PostgreSQL, e.g. postgres://portfolio@db:5432/portfolio (default: the embedded store ' +
        'in --data-dir); several servers may share one database and one --data-dir of files',
    },
    HUB_FLAG,
  ],
  env: [
    {
      name: 'PORTFOLIO_ADMIN_USERNAME',
      description: 'first admin, made when there are no users (default admin)',
    },
    {
      name: 'PORTFOLIO_ADMIN_PASSWORD',
      description: "first admin's password (default: generated, printed once)",
    },
    { name: 'PORTFOLIO_LOG_LEVEL', description: 'fatal … trace (default info)' },
    {
      name: 'PORTFOLIO_LIST_CACHE_MB',
      description: 'memory for reused list answers (default 16; 0 turns it off)',
    },
    {
      name: 'PORTFOLIO_INLINE_LIMIT_MB',
      description: 'most file bytes one answer may inline as base64 `data` (default 64)',
    },
    {
      name: 'PORTFOLIO_IMPORT_LIMIT_MB',
      description: 'largest import ZIP, and the most it may unpack to (default 4000)',
    },
    { name: 'PORTFOLIO_HISTORY', description: '"off" keeps no past revisions (default on)' },
    {
      name: 'PORTFOLIO_HISTORY_DAYS',
      description: 'keep every revision made in the last this many days (default 90)',
    },
    {
      name: 'PORTFOLIO_HISTORY_KEEP',
      description: 'and always the newest this many revisions of each portfolio (default 50)',
    },
    {
      name: 'PORTFOLIO_TRASH_DAYS',
      description: 'days a deleted portfolio stays in the trash (default 30)',
    },
    {
      name: 'PORTFOLIO_TRUST_PROXY',
      description:
        'behind a reverse proxy: its addresses (e.g. loopback) or true; then the client ' +
        'address and https come from X-Forwarded-For and X-Forwarded-Proto (default: none)',
    },
    {
      name: 'PORTFOLIO_BACKUP_DIR',
      description: 'where backups go (default: backups/ beside the data directory)',
    },
    {
      name: 'PORTFOLIO_BACKUP_INTERVAL_HOURS',
      description: 'hours between scheduled backups (default 24; 0 turns the schedule off)',
    },
    { name: 'PORTFOLIO_BACKUP_KEEP', description: 'backups kept in the folder (default 7)' },
    ...HUB_ENV,
    {
      name: 'PORTFOLIO_SYNC_INTERVAL_S',
      description: 'seconds between background sync rounds (default 60; 0: only on request)',
    },
  ],
  notes:
    'Ctrl-C or SIGTERM stops the server once pending writes are on disk. Bound to a loopback\n' +
    'address, it answers only requests that name a loopback host.',

  async run(input) {
    const env = input.env;
    const host = input.option('host') ?? '127.0.0.1';
    const port = parsePort(input.option('port') ?? '8080');
    const dataDir = resolve(input.option('data-dir') ?? 'data');
    const database = input.option('database') || undefined;
    const listCacheBytes = parseCacheMegabytes(env.PORTFOLIO_LIST_CACHE_MB);
    const retention = retentionOf(env);
    const hub = hubOf(input.option('hub'), env);
    const syncInterval = parseSyncInterval(env.PORTFOLIO_SYNC_INTERVAL_S);
    // Loaded only now: help and command-line errors answer without loading the server.
    const { buildApp } = await import('../app');
    const { isLoopbackHostName } = await import('../plugins/loopback-host');

    const app = await buildApp({
      dataDir,
      database,
      rendererDir: builtRendererDir(),
      loopbackOnly: isLoopbackHostName(host),
      trustProxy: parseTrustProxy(env.PORTFOLIO_TRUST_PROXY),
      listCacheBytes,
      ...retention,
      sync: { hub, ...(syncInterval !== undefined && { intervalMs: syncInterval }) },
      logger: {
        level: env.PORTFOLIO_LOG_LEVEL ?? 'info',
        ...(process.stdout.isTTY
          ? { transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss' } } }
          : {}),
      },
      bootstrapAdmin: {
        username: env.PORTFOLIO_ADMIN_USERNAME,
        password: env.PORTFOLIO_ADMIN_PASSWORD,
      },
      // Printed straight to the terminal, never through the logger.
      onGeneratedAdminPassword: ({ username, password }) =>
        print(
          `\nCreated the first admin account. Sign in with:\n  username: ${username}\n  password: ${password}\n` +
            'This password is shown only once; change it under Users.\n',
        ),
      onAdminCreated: (username) =>
        print(
          `Created the first admin account "${username}" with the password from PORTFOLIO_ADMIN_PASSWORD.`,
        ),
    }).catch((error: unknown) => {
      if (error instanceof DataDirInUseError) throw new CommandFailed(error.message);
      if (error instanceof ConfigError) throw new UsageError(error.message);
      // Exit 2 with one line: nothing this server can do until the database is set right.
      if (error instanceof DatabaseConnectError || error instanceof DatabaseSchemaTooNewError)
        throw new DatabaseUnusable(error.message);
      throw error;
    });
    closeOnSignals(app);

    const address = await app.listen({ host, port }).catch(async (error: unknown) => {
      // Close what buildApp opened (store, data-directory lock, timers), then say why in one line.
      await app.close();
      throw listenFailure(error, host, port);
    });
    const shown =
      host === '0.0.0.0' || host === '::' ? address.replace(/\/\/[^:]+:/, '//localhost:') : address;
    const serving = database ? `PostgreSQL at ${targetOf(database)}, files in ${dataDir}` : dataDir;
    print(
      `Portfolio Manager is serving ${serving}\n  UI:   ${shown}/\n  API:  ${shown}/api/v1\n  Docs: ${shown}/docs`,
    );
    // The listening server keeps the process alive until a signal closes it.
    return EXIT.ok;
  },
};
