import { basename, dirname, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runner, type RunnerOption } from 'node-pg-migrate';
import pg from 'pg';
import { ChangeListener } from './change-listener';
import {
  connectionFailure,
  DatabaseConnectError,
  DatabaseNotSetUpError,
  DatabaseSchemaTooNewError,
  targetOf,
} from './database-errors';
import { MIGRATIONS, SCHEMA_VERSION, versionOf } from './migrations';

// Kept apart so that what names a database's failures loads without pg (an embedded start).
export {
  connectionFailure,
  DatabaseConnectError,
  DatabaseNotSetUpError,
  DatabaseSchemaTooNewError,
  targetOf,
};

/** Where node-pg-migrate records the migrations it ran. */
const MIGRATIONS_TABLE = 'schema_migrations';
/** Session advisory lock held while migrating: instances starting together migrate once. */
const MIGRATION_LOCK = 0x706f7274666f6c; // "portfol"
const INT8_OID = 20;

/**
 * int8 columns (seq, counts, millisecond timestamps) arrive as numbers: every value this schema
 * keeps in one stays far below 2^53, where a JavaScript number is exact.
 */
const TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary'
      ? Number
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

export interface DatabaseLogger {
  info(message: string): void;
  warn(message: string): void;
}

const SILENT: DatabaseLogger = { info: () => {}, warn: () => {} };

export interface DatabaseOptions {
  /** Connections this instance keeps open at most (default 10). */
  poolSize?: number;
  /** How long to wait for a connection before giving up (default 10 s). */
  connectTimeoutMs?: number;
  logger?: DatabaseLogger;
  /**
   * Only open a database this application has set up before: an empty one (no migrations table)
   * throws DatabaseNotSetUpError instead of getting the schema. For tools that must not turn a
   * mistyped URL into a new deployment (`portfolio users …`). Default false: migrate from zero.
   */
  mustExist?: boolean;
}

export interface Database {
  readonly pool: pg.Pool;
  /**
   * Connections whose prepared statements get one generic plan, reused for any values, instead of
   * being planned again at every execution (which cost a list about as much as running it). Only
   * for statements whose best plan does not depend on their values: the list's of exact filters
   * (see PgPortfolioRepository.query). Nothing else may run there.
   */
  readonly listPool: pg.Pool;
  /** `host:port`, for messages; never the password. */
  readonly target: string;
  /**
   * This instance's one listening connection on CHANGES_CHANNEL (opened on first call, outside
   * the pool, closed with the database): how its caches hear of other instances' changes.
   */
  changes(): ChangeListener;
  close(): Promise<void>;
}

/** The database name of a connection URL (PostgreSQL's default: the user's name). */
function databaseNameOf(url: string): string {
  const parsed = new URL(url);
  const name = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  return name || decodeURIComponent(parsed.username) || process.env.USER || 'postgres';
}

/**
 * Opens a pool on `url` and brings the schema up to this build's version (once per deploy, under
 * an advisory lock; every other instance starting meanwhile waits, then finds nothing to do).
 * Throws DatabaseConnectError when the database cannot be used and DatabaseSchemaTooNewError when
 * a newer release has migrated it.
 */
export async function openDatabase(url: string, options: DatabaseOptions = {}): Promise<Database> {
  const target = targetOf(url);
  const logger = options.logger ?? SILENT;
  const config: pg.PoolConfig = {
    connectionString: url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    application_name: 'portfolio-manager',
    types: TYPES,
  };
  const pool = openPool(config, logger);
  // Connections open on first use: an instance that serves no list opens none.
  const listPool = openPool(
    { ...config, application_name: 'portfolio-manager-list', options: GENERIC_PLANS },
    logger,
  );
  try {
    await migrate(pool, target, logger, {
      ...(options.mustExist && { mustExist: databaseNameOf(url) }),
    });
  } catch (error) {
    await Promise.all([pool.end(), listPool.end()]).catch(() => {});
    const reason = connectionFailure(error);
    throw reason === undefined ? error : new DatabaseConnectError(target, reason);
  }
  let listener: ChangeListener | undefined;
  return {
    pool,
    listPool,
    target,
    changes() {
      listener ??= new ChangeListener(
        {
          connectionString: url,
          connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
          types: TYPES,
        },
        { logger },
      );
      return listener;
    },
    async close() {
      await listener?.close();
      await Promise.all([pool.end(), listPool.end()]);
    },
  };
}

/**
 * Prepared statements planned once, for any values: see Database.listPool. A session setting of
 * those connections, as PostgreSQL has no per-statement one.
 */
const GENERIC_PLANS = '-c plan_cache_mode=force_generic_plan';

function openPool(config: pg.PoolConfig, logger: DatabaseLogger): pg.Pool {
  const pool = new pg.Pool(config);
  // An idle connection that breaks (server restart, network) must not crash the process: the pool
  // drops it, and the next query opens a new one or reports the failure to its caller.
  pool.on('error', (error) => logger.warn(`PostgreSQL connection lost: ${error.message}`));
  // A connection that breaks while checked out (a query in flight) emits 'error' too, and the pool
  // listens only while a connection is idle: without a listener of its own that error would end
  // the process. The query in flight is rejected all the same, so its caller answers 503.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/**
 * Applies the migrations this database lacks; see openDatabase. With `mustExist` (the database's
 * name, for the message), an empty database throws DatabaseNotSetUpError, checked under the lock
 * so an instance setting it up at the same moment is waited for.
 */
export async function migrate(
  pool: pg.Pool,
  target: string,
  logger: DatabaseLogger = SILENT,
  options: { mustExist?: string } = {},
): Promise<void> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      const migrated = await refuseNewerSchema(client, target);
      if (!migrated && options.mustExist !== undefined)
        throw new DatabaseNotSetUpError(target, options.mustExist);
      await runner(runnerOptions(client, logger));
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } catch (error) {
    broken = error as Error;
    throw error;
  } finally {
    // A client that failed mid-way may hold the lock or a half-open transaction: drop it.
    client.release(broken);
  }
}

/** Throws when a newer release migrated the database; answers whether any migration ran on it. */
async function refuseNewerSchema(client: pg.PoolClient, target: string): Promise<boolean> {
  const exists = await client.query(`SELECT to_regclass('${MIGRATIONS_TABLE}') IS NOT NULL AS ok`);
  if (!exists.rows[0].ok) return false;
  const { rows } = await client.query<{ name: string }>(`SELECT name FROM ${MIGRATIONS_TABLE}`);
  const newest = Math.max(0, ...rows.map((row) => versionOf(row.name)));
  if (newest > SCHEMA_VERSION) throw new DatabaseSchemaTooNewError(target, newest);
  return rows.length > 0;
}

/**
 * node-pg-migrate's runner over the migrations compiled into this build. The runner lists a
 * folder and hands the files it finds to a loader; the migrations, though, are modules bundled
 * into out/server/cli.js (a folder of migration files would not survive the bundling, and a
 * deploy could then run with some missing). So the runner is shown exactly one file, this
 * module's own (it exists wherever the code runs: the source under tsx or vitest, the bundle in
 * production), and the loader answers for it with the bundled list. The runner still does the
 * rest: ordering checks, the migrations table, one transaction for all pending migrations.
 */
function runnerOptions(client: pg.PoolClient, logger: DatabaseLogger): RunnerOption {
  const self = fileURLToPath(import.meta.url);
  const loader = () =>
    Promise.resolve(
      MIGRATIONS.map(({ name, up, down }) => ({
        id: name,
        filePaths: [self],
        actions: { up, down },
      })),
    );
  const escaped = basename(self).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return {
    dbClient: client,
    noLock: true, // held by migrate() around the version check too
    dir: dirname(self),
    ignorePattern: `(?!${escaped}$).*`,
    migrationLoaderStrategies: [{ extensions: [extname(self)], loader }],
    migrationsTable: MIGRATIONS_TABLE,
    direction: 'up',
    checkOrder: true,
    singleTransaction: true,
    logger: { debug: () => {}, info: logger.info, warn: logger.warn, error: logger.warn },
  };
}
