import { dirname, join, resolve } from 'node:path';
import type { FastifyServerOptions } from 'fastify';

/**
 * Seals the hub device token before it is stored (server/sync/secret-box.ts; the desktop shell
 * passes one backed by Electron's safeStorage).
 */
export interface SecretBox {
  seal(plain: string): Promise<string>;
  open(sealed: string): Promise<string>;
}

export interface AuthOptions {
  /** Absolute session lifetime. Default 12 h. */
  sessionLifetimeMs: number;
  /** A session unused for this long expires. Default 2 h. */
  sessionIdleMs: number;
  /**
   * A device token (sync) unused for this long is revoked; its replica signs in again. Default
   * 90 days.
   */
  deviceIdleMs: number;
  /** log2 of scrypt's N. Default 17 (OWASP's recommendation, with r=8, p=1). */
  scryptLogN: number;
  /** Failed sign-ins for one username from one address before 429. Default 5. */
  maxFailedSignIns: number;
  /** Window over which failed sign-ins are counted, and how long a block lasts. Default 15 min. */
  failureWindowMs: number;
  /** Sign-in requests per minute per address, successful or not. Default 30. */
  signInRequestsPerMinute: number;
  /**
   * On PostgreSQL: how long an instance may answer a session it read from memory, at most (other
   * instances' changes end it sooner, by notice). Default 5 s; 0 reads every request's session.
   */
  sessionCacheMs: number;
}

export interface LimitOptions {
  /** Largest JSON request body. Default 80 MB (a base64 file of the file limit fits). */
  bodyBytes: number;
  /** Largest uploaded file. Default 50 MB. */
  fileBytes: number;
  /** Most pixels in an image, checked from its header. Default 50 megapixels. */
  imagePixels: number;
  /** Most files in draftingProcess or additionalDocument. Default 20. */
  filesPerList: number;
  /**
   * Most file bytes one answer may inline as base64 `data`; more is 413 RESPONSE_TOO_LARGE.
   * Default 64 MB, or PORTFOLIO_INLINE_LIMIT_MB.
   */
  inlineBytes: number;
  /**
   * Largest import ZIP, and the most all its entries may unpack to (DESIGN §11: a zip bomb is
   * refused). Default 4 GB, or PORTFOLIO_IMPORT_LIMIT_MB. One file in it: `fileBytes`.
   */
  importBytes: number;
}

/**
 * Bounds on what blob uploads for sync may keep on disk before a change uses it (issue 24, point
 * 4): partial uploads and whole blobs nothing refers to yet. Beyond a user's bound: 413; beyond
 * the server's: 507.
 */
export interface UploadQuotaOptions {
  /** Bytes one user's waiting uploads may take. Default 256 MB, or PORTFOLIO_UPLOAD_QUOTA_USER_MB. */
  userBytes: number;
  /** Unfinished uploads one user may keep. Default 50, or PORTFOLIO_UPLOAD_QUOTA_USER_PARTIALS. */
  userPartials: number;
  /** Bytes everyone's waiting uploads may take. Default 2 GB, or PORTFOLIO_UPLOAD_QUOTA_TOTAL_MB. */
  totalBytes: number;
  /**
   * A partial upload untouched this long is removed (checked every tenth of it, at most every
   * 10 minutes). Default 1 h, or PORTFOLIO_PARTIAL_UPLOAD_IDLE_MINUTES.
   */
  partialIdleMs: number;
  /** How long a whole blob nothing refers to waits for the change that will. Default 1 h. */
  unreferencedKeepMs: number;
}

/** Node's limits on a request's arrival; a client trickling bytes is cut with 408. */
export interface TimeoutOptions {
  /** The whole request, headers and body, must arrive within this. Default 120 s. */
  requestMs: number;
  /** The headers must arrive within this. Default 20 s. */
  headersMs: number;
}

export interface HistoryOptions {
  /** Keep superseded revisions. Off keeps only each portfolio's current one. Default on. */
  enabled: boolean;
  /** Every revision of the last this many days is kept. Default 90. */
  keepDays: number;
  /** And always the newest this many of each portfolio. Default 50. */
  keepNewest: number;
}

export interface TrashOptions {
  /** Deleted portfolios are purged this many days after deletion. Default 30. */
  keepDays: number;
}

export interface BackupOptions {
  /** The folder backups go to. Default `backups/` beside the data directory. */
  target: string;
  /** A backup is made when the newest is older than this. Default a day; 0 turns it off. */
  intervalMs: number;
  /** Backups kept in the target; older ones (and blobs only they held) are removed. Default 7. */
  keep: number;
}

/** `backups/` beside the data directory (DESIGN §11). */
export const defaultBackupTarget = (dataDir: string) => join(dirname(resolve(dataDir)), 'backups');

export interface AppOptions {
  /** Holds the database and the blob store (with `database`: the blob store only). */
  dataDir: string;
  /**
   * A PostgreSQL URL (`postgres://user@host:5432/name`): the database lives there, shared by
   * every instance given the same URL and a data directory with the same blobs. Without it the
   * embedded store in the data directory is used.
   */
  database?: string | null;
  logger?: FastifyServerOptions['logger'];
  /** Built renderer served at `/`; null serves a "not built" page. */
  rendererDir?: string | null;
  /**
   * Answer only requests whose Host is a loopback name (DNS-rebinding defence). Set it whenever
   * the server listens on loopback only.
   */
  loopbackOnly?: boolean;
  /** Admin created when the store has no users; a password is generated when none is given. */
  bootstrapAdmin?: { username?: string; password?: string };
  /** Called once with a generated admin password, so the launcher can show it (never logged). */
  onGeneratedAdminPassword?: (credentials: { username: string; password: string }) => void;
  /**
   * Proxies whose X-Forwarded-For and X-Forwarded-Proto are believed (Fastify's `trustProxy`:
   * `true`, or addresses such as `"loopback"` or `"10.0.0.1,10.0.0.2"`). Then the
   * client address (sign-in throttling, rate limits) and whether the browser used TLS (the
   * session cookie's Secure) come from the proxy. Default: none.
   */
  trustProxy?: boolean | string;
  /** Called once when the first admin was created with the password it was given. */
  onAdminCreated?: (username: string) => void;
  auth?: Partial<AuthOptions>;
  limits?: Partial<LimitOptions>;
  timeouts?: Partial<TimeoutOptions>;
  storage?: { compactMinBytes?: number; generations?: number };
  /**
   * Memory for serialized list answers, reused until the next change to any portfolio.
   * Default 16 MB; 0 turns the cache off.
   */
  listCacheBytes?: number;
  history?: Partial<HistoryOptions>;
  trash?: Partial<TrashOptions>;
  /**
   * With `database`: an unreferenced blob (or upload temp file) younger than this is left for a
   * later pass, since another instance may be about to commit a record that refers to it.
   * Default 10 minutes (longer than a request may take).
   */
  sharedBlobGraceMs?: number;
  uploads?: Partial<UploadQuotaOptions>;
  /** This instance as a sync replica (DESIGN §10): token sealing, round timing, `--hub`. */
  sync?: SyncAppOptions;
  /** Backups (DESIGN §11): where, how often, how many kept. */
  backups?: Partial<BackupOptions>;
  shares?: Partial<ShareOptions>;
  /** The public showcase (DESIGN §15): its rate limit and image cache. */
  showcase?: Partial<ShowcaseOptions>;
}

export interface ShareOptions {
  /** Requests per minute per address to share pages and their images (DESIGN §15). Default 120. */
  pageRequestsPerMinute: number;
}

export interface ShowcaseOptions {
  /** Requests per minute one client address may make to /showcase paths. */
  requestsPerMinute: number;
  /** Bytes of image derivatives kept on disk; the least recently used go beyond it. */
  derivativeCacheBytes: number;
}

export interface ResolvedConfig {
  dataDir: string;
  /** The PostgreSQL URL, or null for the embedded store. */
  database: string | null;
  rendererDir: string | null;
  loopbackOnly: boolean;
  auth: AuthOptions;
  limits: LimitOptions;
  timeouts: TimeoutOptions;
  listCacheBytes: number;
  history: HistoryOptions;
  trash: TrashOptions;
  sharedBlobGraceMs: number;
  uploads: UploadQuotaOptions;
  backups: BackupOptions;
  shares: ShareOptions;
  showcase: ShowcaseOptions;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const MB = 1024 * 1024;

/** A setting the server cannot start with; its message is for the person who set it. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** A size in megabytes from the environment, or undefined when the variable is not set. */
function megabytesFromEnv(name: string): number | undefined {
  const value = process.env[name];
  if (value === undefined || value === '') return undefined;
  const megabytes = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !(megabytes > 0)) {
    throw new ConfigError(`${name} must be a number of megabytes above 0, not "${value}"`);
  }
  return Math.floor(megabytes * MB);
}

export function resolveConfig(options: AppOptions): ResolvedConfig {
  return {
    dataDir: options.dataDir,
    database: options.database || null,
    rendererDir: options.rendererDir ?? null,
    loopbackOnly: options.loopbackOnly ?? false,
    auth: {
      sessionLifetimeMs: 12 * 60 * MINUTE,
      sessionIdleMs: 2 * 60 * MINUTE,
      deviceIdleMs: 90 * 24 * 60 * MINUTE,
      scryptLogN: 17,
      maxFailedSignIns: 5,
      failureWindowMs: 15 * MINUTE,
      signInRequestsPerMinute: 30,
      sessionCacheMs: 5 * SECOND,
      ...options.auth,
    },
    limits: {
      bodyBytes: 80 * MB,
      fileBytes: 50 * MB,
      imagePixels: 50_000_000,
      filesPerList: 20,
      inlineBytes: megabytesFromEnv('PORTFOLIO_INLINE_LIMIT_MB') ?? 64 * MB,
      importBytes: megabytesFromEnv('PORTFOLIO_IMPORT_LIMIT_MB') ?? 4000 * MB,
      ...options.limits,
    },
    timeouts: {
      requestMs: 120 * SECOND,
      headersMs: 20 * SECOND,
      ...options.timeouts,
    },
    listCacheBytes: options.listCacheBytes ?? 16 * MB,
    history: { enabled: true, keepDays: 90, keepNewest: 50, ...options.history },
    trash: { keepDays: 30, ...options.trash },
    sharedBlobGraceMs: options.sharedBlobGraceMs ?? 10 * MINUTE,
    uploads: { ...uploadQuotaFromEnv(process.env), ...options.uploads },
    backups: {
      target: defaultBackupTarget(options.dataDir),
      intervalMs: 24 * 60 * MINUTE,
      keep: 7,
      ...options.backups,
    },
    shares: { pageRequestsPerMinute: 120, ...options.shares },
    showcase: { requestsPerMinute: 300, derivativeCacheBytes: 512 * MB, ...options.showcase },
  };
}

/** The upload quota, from the environment where set (see UploadQuotaOptions). */
function uploadQuotaFromEnv(env: Record<string, string | undefined>): UploadQuotaOptions {
  const idleMinutes = countFromEnv(env, 'PORTFOLIO_PARTIAL_UPLOAD_IDLE_MINUTES', 'minutes', 1);
  return {
    userBytes: megabytesFromEnv('PORTFOLIO_UPLOAD_QUOTA_USER_MB') ?? 256 * MB,
    userPartials: countFromEnv(env, 'PORTFOLIO_UPLOAD_QUOTA_USER_PARTIALS', 'uploads', 1) ?? 50,
    totalBytes: megabytesFromEnv('PORTFOLIO_UPLOAD_QUOTA_TOTAL_MB') ?? 2048 * MB,
    partialIdleMs: (idleMinutes ?? 60) * MINUTE,
    unreferencedKeepMs: 60 * MINUTE,
  };
}

/**
 * History and trash settings from the environment (PORTFOLIO_HISTORY=off,
 * PORTFOLIO_HISTORY_DAYS, PORTFOLIO_HISTORY_KEEP, PORTFOLIO_TRASH_DAYS); unset ones are left to
 * the defaults. Throws ConfigError naming the variable for a bad value.
 */
export function retentionFromEnv(
  env: Record<string, string | undefined>,
): Pick<AppOptions, 'history' | 'trash'> {
  const history: Partial<HistoryOptions> = {};
  const switchValue = env.PORTFOLIO_HISTORY;
  if (switchValue !== undefined) {
    if (!['on', 'off'].includes(switchValue))
      throw new ConfigError(`PORTFOLIO_HISTORY must be "on" or "off", not "${switchValue}"`);
    history.enabled = switchValue === 'on';
  }
  const days = countFromEnv(env, 'PORTFOLIO_HISTORY_DAYS', 'days', 0);
  if (days !== undefined) history.keepDays = days;
  const keep = countFromEnv(env, 'PORTFOLIO_HISTORY_KEEP', 'revisions', 1);
  if (keep !== undefined) history.keepNewest = keep;
  const trashDays = countFromEnv(env, 'PORTFOLIO_TRASH_DAYS', 'days', 0);
  return { history, trash: trashDays === undefined ? {} : { keepDays: trashDays } };
}

/**
 * Backup settings from the environment (PORTFOLIO_BACKUP_DIR, PORTFOLIO_BACKUP_INTERVAL_HOURS,
 * 0 turning the schedule off, PORTFOLIO_BACKUP_KEEP); unset ones are left to the defaults.
 */
export function backupsFromEnv(env: Record<string, string | undefined>): Partial<BackupOptions> {
  const backups: Partial<BackupOptions> = {};
  if (env.PORTFOLIO_BACKUP_DIR) backups.target = resolve(env.PORTFOLIO_BACKUP_DIR);
  const hours = countFromEnv(env, 'PORTFOLIO_BACKUP_INTERVAL_HOURS', 'hours', 0);
  if (hours !== undefined) backups.intervalMs = hours * 60 * MINUTE;
  const keep = countFromEnv(env, 'PORTFOLIO_BACKUP_KEEP', 'backups', 1);
  if (keep !== undefined) backups.keep = keep;
  return backups;
}

function countFromEnv(
  env: Record<string, string | undefined>,
  name: string,
  unit: string,
  minimum: number,
): number | undefined {
  const value = env[name];
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < minimum || !Number.isSafeInteger(Number(value)))
    throw new ConfigError(
      `${name} must be a whole number of ${unit}, ${minimum} or more, not "${value}"`,
    );
  return Number(value);
}

/** Sync as a replica (DESIGN §10): how the replica engine runs (server/sync/). */
export interface SyncAppOptions {
  /** Seals the device token; default a key file in the data directory (0600). */
  secretBox?: SecretBox;
  /** Background rounds: debounce after a local change, and the interval (0 turns them off). */
  debounceMs?: number;
  intervalMs?: number;
  maxBackoffMs?: number;
  pageSize?: number;
  batchSize?: number;
  /** `serve --hub`: sign in to this hub at start unless already configured for it. */
  hub?: { url: string; username: string; password: string };
}
