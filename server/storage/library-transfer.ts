import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type pg from 'pg';
import type {
  RevisionEntry,
  StoredPortfolio,
  TrashEntry,
} from '../repositories/portfolio-repository-contract';
import type { UserRecord } from '../repositories/user-repository-contract';
import { filesOf } from '../domain/portfolio-files';
import { writeFileDurably } from './durable-file';
import {
  LIBRARY_KEY,
  revisionKey,
  type LibraryMeta,
  type StoredRevision,
  type Tombstone,
} from './embedded/portfolio-layout';
import { liveColumns } from './postgres/pg-portfolio-repository';
import type { Op, Store, StoreView } from './embedded/store';
import type { LibraryDump } from '../repositories/library-dump';

export type { LibraryDump };

/**
 * A whole library as plain records, the same whatever backend holds it: what `portfolio storage
 * migrate` moves, and the bulk import of each backend (`importEmbedded`, `importPostgres`), which,
 * unlike the repository's writes, keeps every seq, revision and author exactly as given. It is
 * not part of the PortfolioRepository contract: only a stopped deployment is moved this way.
 *
 * Sessions, sign-in throttling and rate limits are not part of it: after a move everyone signs in
 * again. Thumbnails are a cache, made again from the blobs on demand.
 */
export const DUMP_PARTS = ['portfolios', 'revisions', 'trash', 'tombstones', 'users'] as const;
export type DumpPart = (typeof DUMP_PARTS)[number];

// ---- embedded ----

/** The collections a library is read from. */
export const LIBRARY_COLLECTIONS = ['meta', ...DUMP_PARTS] as const;

/**
 * Reads a library out of an open embedded store, or out of a view of one at one point
 * (`store.durableView(LIBRARY_COLLECTIONS)`, what a backup of a running server reads).
 */
export function exportEmbedded(store: StoreView): LibraryDump {
  const library = store.get<LibraryMeta>('meta', LIBRARY_KEY);
  if (!library) throw new Error('The data directory holds no library yet.');
  const portfolios = [...store.collection<StoredPortfolio>('portfolios').values()];
  const trash = [...store.collection<TrashEntry>('trash').values()];
  // The current revision keeps no snapshot of its own: the live or trashed record is it.
  const current = (entry: StoredRevision) => {
    const live = store.get<StoredPortfolio>('portfolios', entry.portfolioId);
    if (live?.revision === entry.revision) return live;
    const trashed = store.get<TrashEntry>('trash', entry.portfolioId);
    if (trashed?.revision === entry.revision) return trashed.snapshot;
    throw new Error(`Revision ${entry.revision} of ${entry.portfolioId} has no snapshot.`);
  };
  const revisions = [...store.collection<StoredRevision>('revisions').values()].map(
    (entry): RevisionEntry => ({ ...entry, snapshot: entry.snapshot ?? current(entry) }),
  );
  return {
    library: { libraryId: library.libraryId, seq: library.seq, horizon: library.horizon },
    portfolios,
    revisions,
    trash,
    tombstones: [...store.collection<Tombstone>('tombstones').values()],
    users: [...store.collection<UserRecord>('users').values()],
  };
}

/** Whether the store holds anything a library is made of (a new store holds nothing). */
export function embeddedHoldsData(store: Store): boolean {
  return (
    (store.get<LibraryMeta>('meta', LIBRARY_KEY)?.seq ?? 0) > 0 ||
    DUMP_PARTS.some((part) => store.collection(part).size > 0)
  );
}

const OPS_PER_COMMIT = 2000;

/**
 * Writes `dump` into an open embedded store, replacing whatever it held (its sessions too), in
 * the store's own layout: the current revision without a snapshot of its own.
 */
export async function importEmbedded(store: Store, dump: LibraryDump): Promise<void> {
  const ops: Op[] = [];
  for (const col of [...DUMP_PARTS, 'sessions'] as const)
    for (const key of store.collection(col).keys()) ops.push({ type: 'del', col, key });
  ops.push({ type: 'put', col: 'meta', key: LIBRARY_KEY, value: { ...dump.library } });
  for (const record of dump.portfolios)
    ops.push({ type: 'put', col: 'portfolios', key: record.portfolioId, value: record });
  for (const entry of dump.trash)
    ops.push({ type: 'put', col: 'trash', key: entry.portfolioId, value: entry });
  for (const entry of dump.tombstones)
    ops.push({ type: 'put', col: 'tombstones', key: entry.portfolioId, value: entry });
  const currentRevision = new Map<string, number>();
  for (const record of dump.portfolios) currentRevision.set(record.portfolioId, record.revision);
  for (const entry of dump.trash) currentRevision.set(entry.portfolioId, entry.revision);
  for (const entry of dump.revisions) {
    const { snapshot, ...rest } = entry;
    const value: StoredRevision =
      currentRevision.get(entry.portfolioId) === entry.revision ? rest : { ...rest, snapshot };
    ops.push({
      type: 'put',
      col: 'revisions',
      key: revisionKey(entry.portfolioId, entry.revision),
      value,
    });
  }
  for (const user of dump.users)
    ops.push({ type: 'put', col: 'users', key: user.username, value: user });
  for (let start = 0; start < ops.length; start += OPS_PER_COMMIT)
    await store.commit(ops.slice(start, start + OPS_PER_COMMIT));
  await store.idle();
}

/**
 * A replica's sync state, the embedded store's `sync` collection as it is: its link to a hub
 * (the hub's address, the account and the sealed device token), the checkpoint and the base of
 * each portfolio. Not part of a `LibraryDump` (a backup does not keep it: a restored library is a
 * new copy); `storage migrate` carries it between data directories. PostgreSQL holds none: it
 * cannot be a replica.
 */
export type SyncState = [key: string, value: unknown][];

/** The key of the hub link in the `sync` collection (server/sync/replica.ts). */
const SYNC_CONFIG_KEY = 'config';

export function readSyncState(store: StoreView): SyncState {
  return [...store.collection<unknown>('sync').entries()].sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
}

/** The hub this sync state links to, or undefined (never linked, or the hub was forgotten). */
export function syncLinkOf(state: SyncState): { hubUrl: string; username: string } | undefined {
  const config = state.find(([key]) => key === SYNC_CONFIG_KEY)?.[1] as
    { hubUrl: string; username: string } | undefined;
  return config && { hubUrl: config.hubUrl, username: config.username };
}

/** Replaces the store's sync state with `state` (none: the target is then linked to no hub). */
export async function writeSyncState(store: Store, state: SyncState): Promise<void> {
  const ops: Op[] = [];
  for (const key of store.collection('sync').keys()) ops.push({ type: 'del', col: 'sync', key });
  for (const [key, value] of state) ops.push({ type: 'put', col: 'sync', key, value });
  for (let start = 0; start < ops.length; start += OPS_PER_COMMIT)
    await store.commit(ops.slice(start, start + OPS_PER_COMMIT));
  await store.idle();
}

/** Counts and content hash of a sync state, for comparing the two copies of it. */
export function summarizeSync(state: SyncState): PartSummary {
  const hash = createHash('sha256');
  for (const [key, value] of state) hash.update(canonical([key, value])).update('\n');
  return { count: state.length, sha256: hash.digest('hex') };
}

// ---- PostgreSQL ----

/**
 * Reads a library out of PostgreSQL in one snapshot (REPEATABLE READ), so a library that is
 * still being written reads as it was at one moment.
 */
export async function exportPostgres(pool: pg.Pool): Promise<LibraryDump> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const library = (
      await client.query<LibraryMeta>('SELECT library_id AS "libraryId", seq, horizon FROM library')
    ).rows[0]!;
    const records = <T>(text: string) =>
      client.query<{ value: T }>(text).then(({ rows }) => rows.map((row) => row.value));
    const dump: LibraryDump = {
      library: { libraryId: library.libraryId, seq: library.seq, horizon: library.horizon },
      portfolios: await records<StoredPortfolio>(
        'SELECT record AS value FROM portfolios ORDER BY seq',
      ),
      revisions: await records<RevisionEntry>(
        `SELECT json_build_object('portfolioId', portfolio_id, 'revision', revision, 'seq', seq,
           'modifiedTime', modified_time, 'modifiedBy', modified_by, 'command', command,
           'changedFields', changed_fields, 'snapshot', snapshot) AS value
         FROM revisions ORDER BY portfolio_id, revision`,
      ),
      trash: await records<TrashEntry>(
        `SELECT json_build_object('portfolioId', portfolio_id, 'projectTitle', project_title,
           'category', category, 'deletedTime', deleted_time, 'deletedBy', deleted_by,
           'revision', revision, 'seq', seq, 'snapshot', snapshot) AS value
         FROM trash ORDER BY seq`,
      ),
      tombstones: await records<Tombstone>(
        `SELECT json_strip_nulls(json_build_object('portfolioId', portfolio_id,
           'revision', revision, 'seq', seq, 'deletedTime', deleted_time,
           'purgedTime', purged_time, 'syncApplied', sync_applied)) AS value
         FROM tombstones ORDER BY seq`,
      ),
      users: await records<UserRecord>('SELECT record AS value FROM users ORDER BY username'),
    };
    await client.query('COMMIT');
    return dump;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** Whether the database holds anything a library is made of (a new one holds nothing). */
export async function postgresHoldsData(pool: pg.Pool): Promise<boolean> {
  const { rows } = await pool.query<{ used: boolean }>(
    `SELECT (SELECT seq > 0 FROM library)
       OR EXISTS (SELECT 1 FROM portfolios) OR EXISTS (SELECT 1 FROM revisions)
       OR EXISTS (SELECT 1 FROM trash) OR EXISTS (SELECT 1 FROM tombstones)
       OR EXISTS (SELECT 1 FROM users) AS used`,
  );
  return rows[0]!.used;
}

/** Rows per INSERT: one statement of many rows (json_populate_recordset), not a round trip each. */
const ROWS_PER_INSERT = 500;

/**
 * Writes `dump` into a migrated PostgreSQL database in one transaction, replacing whatever it
 * held (its sessions, device tokens, throttling and rate limits too): either all of it is there afterwards or
 * nothing changed. The rows are sent as JSON, many per statement, and the columns the list and
 * search use are made by the repository's own code (`liveColumns`).
 */
export async function importPostgres(
  pool: pg.Pool,
  dump: LibraryDump,
  /** Runs with every row written and the transaction still open (a test stops there). */
  beforeCommit?: () => Promise<void>,
): Promise<void> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    await client.query(
      `TRUNCATE portfolios, revisions, trash, tombstones, users, sessions, devices,
         sign_in_attempts, rate_limits`,
    );
    await client.query('UPDATE library SET library_id = $1, seq = $2, horizon = $3', [
      dump.library.libraryId,
      dump.library.seq,
      dump.library.horizon,
    ]);
    await insertRows(client, 'portfolios', dump.portfolios, (record) => {
      const columns = liveColumns(record);
      return {
        ...columns,
        record,
        title_key: hex(columns.title_key as Buffer),
        category_key: hex(columns.category_key as Buffer),
      };
    });
    await insertRows(client, 'revisions', dump.revisions, (entry) => ({
      portfolio_id: entry.portfolioId,
      revision: entry.revision,
      seq: entry.seq,
      modified_time: entry.modifiedTime,
      modified_by: entry.modifiedBy,
      command: entry.command,
      changed_fields: entry.changedFields,
      snapshot: entry.snapshot,
      blobs: [...new Set(filesOf(entry.snapshot).map((file) => file.sha256))],
    }));
    await insertRows(client, 'trash', dump.trash, (entry) => ({
      portfolio_id: entry.portfolioId,
      seq: entry.seq,
      revision: entry.revision,
      project_title: entry.projectTitle,
      category: entry.category,
      deleted_time: entry.deletedTime,
      deleted_by: entry.deletedBy,
      snapshot: entry.snapshot,
    }));
    await insertRows(client, 'tombstones', dump.tombstones, (entry) => ({
      portfolio_id: entry.portfolioId,
      seq: entry.seq,
      revision: entry.revision,
      deleted_time: entry.deletedTime,
      purged_time: entry.purgedTime,
      sync_applied: entry.syncApplied ?? null,
    }));
    await insertRows(client, 'users', dump.users, (user) => ({
      username: user.username,
      role: user.role,
      record: user,
    }));
    await beforeCommit?.();
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
    throw error;
  } finally {
    client.release(broken);
  }
}

/** bytea in its text form, as json_populate_recordset reads it. */
const hex = (bytes: Buffer) => `\\x${bytes.toString('hex')}`;

async function insertRows<T>(
  client: pg.PoolClient,
  table: string,
  items: readonly T[],
  row: (item: T) => Record<string, unknown>,
): Promise<void> {
  for (let start = 0; start < items.length; start += ROWS_PER_INSERT) {
    const rows = items.slice(start, start + ROWS_PER_INSERT).map(row);
    const columns = Object.keys(rows[0]!).join(', ');
    await client.query(
      `INSERT INTO ${table} (${columns})
       SELECT ${columns} FROM json_populate_recordset(NULL::${table}, $1::json)`,
      [JSON.stringify(rows)],
    );
  }
}

// ---- verification ----

/** JSON with every object's keys sorted: the same text for the same content, whatever the order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

export interface PartSummary {
  count: number;
  /** SHA-256 of the part's items in canonical JSON, sorted: equal exactly when the content is. */
  sha256: string;
}

export type DumpSummary = Record<'library' | DumpPart, PartSummary>;

/** Counts and content hashes of every part of a library, for comparing two copies of it. */
export function summarize(dump: LibraryDump): DumpSummary {
  const summary = (items: readonly unknown[]): PartSummary => {
    const texts = items.map(canonical).sort();
    const hash = createHash('sha256');
    for (const text of texts) hash.update(text).update('\n');
    return { count: items.length, sha256: hash.digest('hex') };
  };
  return {
    library: summary([dump.library]),
    portfolios: summary(dump.portfolios),
    revisions: summary(dump.revisions),
    trash: summary(dump.trash),
    tombstones: summary(dump.tombstones),
    users: summary(dump.users),
  };
}

/** Every blob a library refers to (live, trashed and kept revisions). */
export function blobsOf(dump: LibraryDump): string[] {
  const blobs = new Set<string>();
  const add = (record: StoredPortfolio) => {
    for (const file of filesOf(record)) blobs.add(file.sha256);
  };
  dump.portfolios.forEach(add);
  dump.trash.forEach((entry) => add(entry.snapshot));
  dump.revisions.forEach((entry) => add(entry.snapshot));
  return [...blobs].sort();
}

/** `<root>/ab/cdef…`, the blob store's layout (server/storage/blob-store.ts). */
export const blobPath = (root: string, sha256: string) =>
  join(root, sha256.slice(0, 2), sha256.slice(2));

export class BlobCopyError extends Error {
  override readonly name = 'BlobCopyError';
}

/**
 * Copies each blob from one blob root to another, checking its SHA-256 on the way (a missing or
 * damaged blob stops the copy), and written as the blob store writes (temp, fsync, rename).
 * A blob already at the target with the right content is kept. Answers the bytes copied.
 */
export function copyBlobs(
  from: string,
  to: string,
  blobs: readonly string[],
): Promise<{ copied: number; present: number; bytes: number }> {
  return copyBlobsFrom((sha256) => blobPath(from, sha256), to, blobs);
}

/** `copyBlobs` from wherever `source` says each blob is (a backup keeps them flat). */
export async function copyBlobsFrom(
  source: (sha256: string) => string,
  to: string,
  blobs: readonly string[],
): Promise<{ copied: number; present: number; bytes: number }> {
  let copied = 0;
  let present = 0;
  let bytes = 0;
  for (const sha256 of blobs) {
    const bytesRead = await readVerifiedAt(source(sha256), sha256);
    bytes += bytesRead.length;
    const existing = await readFile(blobPath(to, sha256)).catch(() => undefined);
    if (existing && sha256Of(existing) === sha256) {
      present++;
      continue;
    }
    await mkdir(join(to, sha256.slice(0, 2)), { recursive: true });
    await writeFileDurably(blobPath(to, sha256), [bytesRead]);
    copied++;
  }
  return { copied, present, bytes };
}

/** Reads every blob at `root` and checks its content against its name. */
export async function verifyBlobs(root: string, blobs: readonly string[]): Promise<void> {
  for (const sha256 of blobs) await readVerified(root, sha256);
}

const sha256Of = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function readVerified(root: string, sha256: string): Promise<Buffer> {
  return readVerifiedAt(blobPath(root, sha256), sha256);
}

async function readVerifiedAt(path: string, sha256: string): Promise<Buffer> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch {
    throw new BlobCopyError(`The blob ${sha256} is missing: ${path}.`);
  }
  if (sha256Of(bytes) !== sha256)
    throw new BlobCopyError(`The blob ${path} is damaged: its content does not match its name.`);
  return bytes;
}
