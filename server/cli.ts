import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildApp } from './app';
import { ConfigError, retentionFromEnv } from './config';
import { isLoopbackHostName } from './plugins/loopback-host';
import { DataDirInUseError } from './storage/data-dir-lock';

const HELP = `Portfolio Manager headless server

Usage: npm run serve -- [options]
       tsx server/cli.ts serve [options]

Options (each also as an environment variable):
  --host <address>      PORTFOLIO_HOST       address to listen on (default 127.0.0.1;
                                             0.0.0.0 shares on the LAN)
  --port <number>       PORTFOLIO_PORT       port (default 8080; 0 picks a free one)
  --data-dir <path>     PORTFOLIO_DATA_DIR   database and files (default ./data)
  --help                                     show this help

First start (no users yet): the admin account comes from PORTFOLIO_ADMIN_USERNAME and
PORTFOLIO_ADMIN_PASSWORD; without a password one is generated and printed once.
PORTFOLIO_LOG_LEVEL sets the log level (default info). PORTFOLIO_LIST_CACHE_MB sets the memory
for reused list answers (default 16; 0 turns the cache off). History: PORTFOLIO_HISTORY=off
keeps no past revisions; PORTFOLIO_HISTORY_DAYS (default 90) and PORTFOLIO_HISTORY_KEEP
(default 50) keep every revision that recent and always the newest that many.
PORTFOLIO_TRASH_DAYS (default 30) is how long deleted portfolios stay in the trash.`;

function fail(message: string): never {
  console.error(`error: ${message}`);
  process.exit(2);
}

function parseCacheMegabytes(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const megabytes = Number(value);
  if (value.trim() === '' || !Number.isFinite(megabytes) || megabytes < 0)
    fail(`PORTFOLIO_LIST_CACHE_MB must be a number of megabytes, 0 or more, not "${value}"`);
  return Math.round(megabytes * 1024 * 1024);
}

function parseRetention(env: NodeJS.ProcessEnv) {
  try {
    return retentionFromEnv(env);
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message);
    throw error;
  }
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    fail(`--port must be 0..65535, not "${value}"`);
  return port;
}

function parseCommandLine() {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        'data-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    // An unknown or incomplete flag is the user's mistake: say so, without a stack trace.
    fail(`${(error as Error).message}\nRun with --help for usage.`);
  }
}

/**
 * The built web UI, out/renderer under the project root: the nearest folder above this file with
 * a package.json, whether this runs as server/cli.ts (tsx) or as the build, out/server/cli.js.
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

async function main(): Promise<void> {
  const { values, positionals } = parseCommandLine();
  const command = positionals[0] ?? 'serve';
  if (values.help) return void console.log(HELP);
  if (command !== 'serve') fail(`unknown command "${command}"\n\n${HELP}`);

  const env = process.env;
  const host = values.host ?? env.PORTFOLIO_HOST ?? '127.0.0.1';
  const port = parsePort(values.port ?? env.PORTFOLIO_PORT ?? '8080');
  const dataDir = resolve(values['data-dir'] ?? env.PORTFOLIO_DATA_DIR ?? 'data');
  const listCacheBytes = parseCacheMegabytes(env.PORTFOLIO_LIST_CACHE_MB);
  const retention = parseRetention(env);

  const app = await buildApp({
    dataDir,
    rendererDir: builtRendererDir(),
    loopbackOnly: isLoopbackHostName(host),
    listCacheBytes,
    ...retention,
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
      console.log(
        `\nCreated the first admin account. Sign in with:\n  username: ${username}\n  password: ${password}\n` +
          'This password is shown only once; change it under Users.\n',
      ),
  }).catch((error: unknown) => {
    if (error instanceof DataDirInUseError) fail(error.message);
    throw error;
  });

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

  const address = await app.listen({ host, port });
  const shown =
    host === '0.0.0.0' || host === '::' ? address.replace(/\/\/[^:]+:/, '//localhost:') : address;
  console.log(
    `Portfolio Manager is serving ${dataDir}\n  UI:   ${shown}/\n  API:  ${shown}/api/v1\n  Docs: ${shown}/docs`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
