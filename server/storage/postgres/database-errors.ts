import { SCHEMA_VERSION } from './migrations';

/*
 * The failures of opening a PostgreSQL database, and how to name them, apart from database.ts:
 * the CLI and the error handler need them on every start, and database.ts loads pg and
 * node-pg-migrate, which an embedded start does not need (about a tenth of its module loading).
 */

/** The database cannot be used at all: one line naming where and why, no stack trace needed. */
export class DatabaseConnectError extends Error {
  override readonly name = 'DatabaseConnectError';
  constructor(
    readonly target: string,
    readonly reason: string,
  ) {
    super(`Cannot connect to PostgreSQL at ${target}: ${reason}.`);
  }
}

/** The database was migrated by a newer release; this one must not touch it. */
export class DatabaseSchemaTooNewError extends Error {
  override readonly name = 'DatabaseSchemaTooNewError';
  constructor(
    readonly target: string,
    readonly databaseVersion: number,
  ) {
    super(
      `The database at ${target} has schema version ${databaseVersion}; this Portfolio Manager ` +
        `reads up to version ${SCHEMA_VERSION}. Run a release that knows schema version ` +
        `${databaseVersion} (or restore a backup made before the upgrade).`,
    );
  }
}

/** The database holds no Portfolio Manager schema (it was never migrated), and was left so. */
export class DatabaseNotSetUpError extends Error {
  override readonly name = 'DatabaseNotSetUpError';
  constructor(
    readonly target: string,
    readonly databaseName: string,
  ) {
    super(
      `no Portfolio Manager database at ${target}/${databaseName} (it was never set up; nothing ` +
        'was created). Check --database, or set it up by starting "portfolio serve --database …".',
    );
  }
}

/** `host:port` of a connection URL (a socket directory given as `?host=` counts as the host). */
export function targetOf(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DatabaseConnectError('(invalid URL)', 'the database URL cannot be parsed');
  }
  const host =
    decodeURIComponent(parsed.hostname) || parsed.searchParams.get('host') || 'localhost';
  const port = parsed.port || parsed.searchParams.get('port') || '5432';
  return `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}

const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused (is PostgreSQL running and listening there?)',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be resolved',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'no answer (timed out)',
  ECONNRESET: 'the connection was closed',
  EPIPE: 'the connection was closed',
};

/** SQLSTATEs that say "this server will not let us in", worth one clear line. */
const REFUSING_STATES = new Set([
  '28000', // invalid authorization
  '28P01', // wrong password
  '3D000', // no such database
  '53300', // too many connections
  '57P03', // starting up or shutting down
]);

/**
 * Why `error` means the database cannot be reached or used at all (network, authentication,
 * missing database, server going away), or undefined for any other error.
 */
export function connectionFailure(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  // Node reports a host with several addresses (localhost: ::1 and 127.0.0.1) as an aggregate.
  if (error instanceof AggregateError && typeof code !== 'string')
    return connectionFailure(error.errors[0]);
  if (typeof code === 'string') {
    if (NETWORK_REASONS[code]) return NETWORK_REASONS[code];
    if (REFUSING_STATES.has(code) || code === '57P01') return error.message;
  }
  if (/timeout/i.test(error.message)) return 'no answer (timed out)';
  if (/Connection terminated/i.test(error.message)) return 'the connection was closed';
  return undefined;
}
