import type pg from 'pg';
import {
  fieldKeysWhere,
  foldCase,
  PORTFOLIO_FIELDS,
  type FieldRow,
  type PortfolioRecord,
} from '../../../shared';
import type {
  FacetCounts,
  FacetRequest,
  ListedKey,
  ListPage,
  ListRequest,
} from '../../repositories/portfolio-repository-contract';
import {
  InvalidCursorError,
  PortfolioIdTakenError,
  PortfolioNotFoundError,
  FeedBehindError,
  ResyncRequiredError,
  RevisionConflictError,
  type Change,
  type ChangeMeta,
  type ChangePage,
  type ImportedRevision,
  type Page,
  type PortfolioRepository,
  type PurgedPortfolio,
  type RetentionPolicy,
  type RevisionEntry,
  type StoredPortfolio,
  type TrashEntry,
} from '../../repositories/portfolio-repository-contract';
import { filesOf } from '../../domain/portfolio-files';
import { GroupCommit } from './group-commit';
import { PreparedStatements } from './prepared-statements';
import { searchColumns } from './search-sql';
import { Lru } from '../../lib/lru';
import {
  Parameters,
  facetCounts,
  facetsStatement,
  listPage,
  listStatement,
  storable,
  textSortValue,
  utf16Key,
  type FacetRow,
  type KnownTotal,
  type ListRow,
} from './list-sql';

export interface PgRepositoryOptions {
  /** Keep superseded revisions (default). Off: only each portfolio's current revision is kept. */
  history?: boolean;
  /**
   * Where the list's statements of exact filters run prepared (Database.listPool, whose plans
   * are made once for any values). Default: the pool, where they are prepared and planned anew
   * at every execution until PostgreSQL judges a generic plan good enough.
   */
  listPool?: pg.Pool;
}

/** Portfolios purged or pruned per transaction: short transactions, short waits for writers. */
const BATCH = 200;
/** Counted totals (combined filters, searches) kept: a few bytes each. */
const MAX_CACHED_TOTALS = 1024;

const TRASH_COLUMNS = `portfolio_id AS "portfolioId", project_title AS "projectTitle", category,
  deleted_time AS "deletedTime", deleted_by AS "deletedBy", revision, seq, snapshot`;
const REVISION_COLUMNS = `portfolio_id AS "portfolioId", revision, seq,
  modified_time AS "modifiedTime", modified_by AS "modifiedBy", command,
  changed_fields AS "changedFields", snapshot`;

/** A statement of a change: SQL whose placeholders come from the change's shared Parameters. */
type Write = (p: Parameters) => string;

/**
 * The portfolio repository contract over PostgreSQL (DESIGN §9, §12).
 *
 * Invariants:
 * - Every change first takes the next seq with `UPDATE library SET seq = seq + 1` in its
 *   transaction. That row lock is held until commit, so writers pass one at a time from there
 *   on: seq follows commit order exactly (a plain sequence hands out numbers at call time, and a
 *   later number could commit first, letting a feed reader step past an earlier one still in
 *   flight), a change rolled back gives its number back (no gaps), and the checks made after it
 *   (id taken, compare-and-set) cannot race another writer. The price is one writing transaction
 *   at a time, which group commit (below) makes up for; reads run in parallel.
 * - A portfolio is in exactly one place: `portfolios` (live), `trash` or `tombstones` (purged), at
 *   the seq of its latest change, so the three together, by seq, are the collapsed feed.
 * - `revisions` holds every kept revision with its full snapshot, the current one included, so
 *   the blobs referenced are exactly those its rows name.
 * - Jobs that do not take a seq (retention, forgetting tombstones) lock the library row too, so
 *   every writer takes its row locks in the same order and none can deadlock another.
 * - Within one instance, changes run in call order through one GroupCommit: they would wait for
 *   each other on the library row anyway, so those that queue up share one transaction and one
 *   WAL flush, and a burst of writes holds one pooled connection, not all that reads need.
 *   Across instances the library row orders them.
 */
export class PgPortfolioRepository implements PortfolioRepository {
  /** Totals per filter and visibility, each with the seq it was counted at. */
  private readonly totals = new Lru<KnownTotal>(MAX_CACHED_TOTALS);
  private readonly writes: GroupCommit;
  /** The list's statements of exact filters, prepared on each connection of the list pool. */
  private readonly statements: PreparedStatements;
  /** Creates waiting for their writing turn (see insert). */
  private creates: QueuedCreate[] = [];

  private constructor(
    private readonly pool: pg.Pool,
    readonly libraryId: string,
    private readonly keepHistory: boolean,
    listPool: pg.Pool,
  ) {
    this.writes = new GroupCommit(pool);
    this.statements = new PreparedStatements(listPool);
  }

  /** Opens the repository on a migrated database (see openDatabase). */
  static async open(
    pool: pg.Pool,
    options: PgRepositoryOptions = {},
  ): Promise<PgPortfolioRepository> {
    const { rows } = await pool.query<{ library_id: string }>('SELECT library_id FROM library');
    return new PgPortfolioRepository(
      pool,
      rows[0]!.library_id,
      options.history ?? true,
      options.listPool ?? pool,
    );
  }

  async get(portfolioId: string): Promise<StoredPortfolio | undefined> {
    if (!storable(portfolioId)) return undefined;
    const { rows } = await this.pool.query<{ record: StoredPortfolio }>(
      'SELECT record FROM portfolios WHERE portfolio_id = $1',
      [portfolioId],
    );
    return rows[0]?.record;
  }

  async listConflicted(): Promise<StoredPortfolio[]> {
    // The predicate of the partial index portfolios_conflicted (migration 0004), word for word.
    const { rows } = await this.pool.query<{ record: StoredPortfolio }>(
      `SELECT record FROM portfolios WHERE json_typeof(record -> 'conflicts') = 'array'
       ORDER BY portfolio_id`,
    );
    return rows.map((row) => row.record).filter((record) => (record.conflicts?.length ?? 0) > 0);
  }

  async query<K extends ListedKey = ListedKey>(request: ListRequest<K>): Promise<ListPage<K>> {
    const key = `${request.visibleOnly ? 'viewer' : 'staff'}|${request.filterKey}|${request.searchKey}`;
    const statement = listStatement(request, this.totals.use(key));
    const { text, values, counted, items } = statement;
    const { rows } = statement.generic
      ? await this.statements.query<ListRow>(text, values)
      : await this.pool.query<ListRow>(text, values);
    const page = listPage(rows[0]!, request, items);
    if (counted) this.totals.put(key, { seq: rows[0]!.seq, total: page.total });
    return page;
  }

  async facets(request: FacetRequest): Promise<FacetCounts> {
    const { text, values } = facetsStatement(request);
    const { rows } = await this.pool.query<FacetRow>(text, values);
    return facetCounts(request, rows);
  }

  /**
   * Creates wait for the writer together: those that queue up meanwhile go to the database as
   * one statement (one round trip while the library row is locked for all of them), which checks
   * every id, takes their seqs in call order and writes the records and their revisions, each
   * record's JSON text made around the seq it takes (see createsStatement). A taken id changes
   * nothing and fails only its own create. Should the statement fail in the database (another
   * instance created one of the ids at the same moment), the group runs again with each create
   * on its own. A record whose JSON cannot be split that way takes the general path.
   */
  insert(record: PortfolioRecord, meta: ChangeMeta): Promise<StoredPortfolio> {
    const create = pendingCreate(record, meta);
    if (!create) return this.insertInSteps(record, meta);
    return new Promise<StoredPortfolio>((resolve, reject) => {
      this.creates.push({ ...create, resolve, reject });
      if (this.creates.length === 1) this.queueCreates();
    });
  }

  /** One writing turn for the creates queued by then (at most MAX_CREATES; the rest queue again). */
  private queueCreates(): void {
    let batch: QueuedCreate[] | undefined;
    let attempts = 0;
    const outcomes = this.writing(async (client) => {
      if (batch === undefined) {
        batch = this.creates.splice(0, MAX_CREATES);
        if (this.creates.length > 0) this.queueCreates();
      }
      attempts++;
      return attempts === 1 && uniqueIds(batch)
        ? createsTogether(client, batch)
        : createsOneByOne(client, batch);
    }, true);
    outcomes.then(
      (results) =>
        results.forEach((result, index) => {
          const create = batch![index]!;
          if (result.ok) create.resolve(result.value);
          else create.reject(result.error);
        }),
      (error: unknown) => {
        for (const create of batch ?? this.creates.splice(0)) create.reject(error);
      },
    );
  }

  private insertInSteps(record: PortfolioRecord, meta: ChangeMeta): Promise<StoredPortfolio> {
    const id = record.portfolioId;
    return this.change(async (client, seq) => {
      const { rows } = await client.query<{ taken: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM portfolios WHERE portfolio_id = $1)
             OR EXISTS (SELECT 1 FROM trash WHERE portfolio_id = $1) AS taken`,
        [id],
      );
      if (rows[0]!.taken) throw new PortfolioIdTakenError(id);
      const stored: StoredPortfolio = { ...record, seq, createdBy: meta.by, modifiedBy: meta.by };
      // A purged id may be used again: the live record replaces its tombstone in the feed.
      await write(client, [
        (p) => `DELETE FROM tombstones WHERE portfolio_id = ${p.add(id)}`,
        ...this.liveWrites(stored, meta, undefined),
      ]);
      return stored;
    });
  }

  insertWithHistory(revisions: ImportedRevision[]): Promise<StoredPortfolio> {
    const newest = revisions.at(-1)!;
    const id = newest.snapshot.portfolioId;
    const kept = this.keepHistory ? revisions : [newest];
    return this.writing(async (client) => {
      const { rows } = await client.query<{ taken: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM portfolios WHERE portfolio_id = $1)
             OR EXISTS (SELECT 1 FROM trash WHERE portfolio_id = $1) AS taken`,
        [id],
      );
      if (rows[0]!.taken) throw new PortfolioIdTakenError(id);
      const last = (
        await client.query<{ seq: number }>('UPDATE library SET seq = seq + $1 RETURNING seq', [
          kept.length,
        ])
      ).rows[0]!.seq;
      const first = last - kept.length + 1;
      const records = kept.map(({ snapshot }, index): StoredPortfolio => ({
        ...snapshot,
        portfolioId: id,
        seq: first + index,
      }));
      const stored = records.at(-1)!;
      await write(client, [
        (p) => `DELETE FROM tombstones WHERE portfolio_id = ${p.add(id)}`,
        (p) => upsertLive(p, stored),
        ...kept.map(
          ({ snapshot: _s, ...meta }, index): Write =>
            (p) =>
              insertRevision(p, records[index]!, {
                by: meta.modifiedBy,
                time: meta.modifiedTime,
                command: meta.command,
                changedFields: meta.changedFields,
              }),
        ),
      ]);
      return stored;
    });
  }

  update(
    portfolioId: string,
    expectedRevision: number,
    next: PortfolioRecord,
    meta: ChangeMeta,
  ): Promise<StoredPortfolio> {
    return this.change(async (client, seq) => {
      const current = await live(client, portfolioId, expectedRevision);
      assertFollows(next, expectedRevision);
      const stored: StoredPortfolio = {
        ...next,
        portfolioId,
        seq,
        createdBy: current.createdBy,
        modifiedBy: meta.by,
      };
      await write(client, this.liveWrites(stored, meta, current.revision));
      return stored;
    });
  }

  delete(
    portfolioId: string,
    expectedRevision: number | undefined,
    meta: ChangeMeta,
  ): Promise<TrashEntry> {
    return this.change(async (client, seq) => {
      const current = await live(client, portfolioId, expectedRevision);
      const entry: TrashEntry = {
        portfolioId,
        projectTitle: current.projectTitle,
        category: current.category,
        deletedTime: meta.time,
        deletedBy: meta.by,
        revision: current.revision,
        seq,
        snapshot: current,
      };
      await write(client, [
        (p) => `DELETE FROM portfolios WHERE portfolio_id = ${p.add(portfolioId)}`,
        (p) => `INSERT INTO trash (portfolio_id, project_title, category, deleted_time,
                  deleted_by, revision, seq, snapshot)
                VALUES (${p.add(portfolioId)}, ${p.add(entry.projectTitle)},
                  ${p.add(entry.category)}, ${p.add(entry.deletedTime)}, ${p.add(entry.deletedBy)},
                  ${p.add(entry.revision)}, ${p.add(seq)}, ${p.add(JSON.stringify(current))})`,
      ]);
      return entry;
    });
  }

  restoreFromTrash(
    portfolioId: string,
    next: PortfolioRecord,
    meta: ChangeMeta,
  ): Promise<StoredPortfolio> {
    return this.change(async (client, seq) => {
      const entry = await trashed(client, portfolioId);
      if (!entry) throw new PortfolioNotFoundError(portfolioId);
      assertFollows(next, entry.revision);
      const stored: StoredPortfolio = {
        ...next,
        portfolioId,
        seq,
        createdBy: entry.snapshot.createdBy,
        modifiedBy: meta.by,
      };
      await write(client, [
        (p) => `DELETE FROM trash WHERE portfolio_id = ${p.add(portfolioId)}`,
        ...this.liveWrites(stored, meta, entry.revision),
      ]);
      return stored;
    });
  }

  getTrashed(portfolioId: string): Promise<TrashEntry | undefined> {
    return trashed(this.pool, portfolioId);
  }

  async listTrash(pageSize: number, cursor: string | null): Promise<Page<TrashEntry>> {
    const before = cursor === null ? null : parseCursor(cursor);
    const { rows } = await this.pool.query<{ total: number; entry: TrashEntry | null }>(
      `SELECT counted.total, row_to_json(page) AS entry
       FROM (SELECT count(*) AS total FROM trash) counted
       LEFT JOIN LATERAL (
         SELECT ${TRASH_COLUMNS} FROM trash
         WHERE $1::bigint IS NULL OR seq < $1
         ORDER BY seq DESC LIMIT $2
       ) page ON true
       ORDER BY page.seq DESC`,
      [before, pageSize + 1],
    );
    return pageOf(rows, pageSize, (entry) => entry.seq);
  }

  async purge(options: { deletedBefore?: number; portfolioId?: string }): Promise<string[]> {
    if (options.portfolioId !== undefined && !storable(options.portfolioId)) return [];
    const purged: string[] = [];
    for (;;) {
      const batch = await this.writing(async (client) => {
        const { rows: library } = await client.query<{ seq: number }>(
          'SELECT seq FROM library FOR UPDATE',
        );
        // Chosen under the library lock: an entry restored meanwhile is no longer in the trash.
        const { rows } = await client.query<{ portfolio_id: string }>(
          `SELECT portfolio_id FROM trash
           WHERE ($1::text IS NULL OR portfolio_id = $1)
             AND ($2::bigint IS NULL OR deleted_time < $2)
           ORDER BY seq LIMIT ${BATCH}`,
          [options.portfolioId ?? null, options.deletedBefore ?? null],
        );
        if (rows.length === 0) return [];
        const ids = rows.map((row) => row.portfolio_id);
        const seqs = ids.map((_, index) => library[0]!.seq + index + 1);
        await write(client, [
          (p) => `DELETE FROM revisions WHERE portfolio_id = ANY(${p.add(ids)}::text[])`,
          (p) => `DELETE FROM trash WHERE portfolio_id = ANY(${p.add(ids)}::text[])`,
          (p) => `INSERT INTO tombstones
                    (portfolio_id, seq, revision, deleted_time, purged_time, sync_applied)
                  SELECT t.portfolio_id, s.seq, t.revision, t.deleted_time, ${p.add(Date.now())},
                    t.snapshot -> 'syncApplied'
                  FROM trash t
                  JOIN unnest(${p.add(ids)}::text[], ${p.add(seqs)}::bigint[])
                    AS s(portfolio_id, seq) ON s.portfolio_id = t.portfolio_id`,
          (p) => `UPDATE library SET seq = ${p.add(seqs.at(-1))}`,
        ]);
        return ids;
      });
      purged.push(...batch);
      if (batch.length < BATCH) return purged;
    }
  }

  async getPurged(portfolioId: string): Promise<PurgedPortfolio | undefined> {
    const { rows } = await this.pool.query<
      Omit<PurgedPortfolio, 'syncApplied'> & { syncApplied: PurgedPortfolio['syncApplied'] | null }
    >(
      `SELECT portfolio_id AS "portfolioId", revision, seq::float8 AS seq,
         sync_applied AS "syncApplied"
       FROM tombstones WHERE portfolio_id = $1`,
      [portfolioId],
    );
    const row = rows[0];
    return row && { ...row, syncApplied: row.syncApplied ?? [] };
  }

  async revisions(
    portfolioId: string,
    pageSize: number,
    cursor: string | null,
  ): Promise<Page<RevisionEntry>> {
    const before = cursor === null ? null : parseCursor(cursor);
    if (!storable(portfolioId)) return { items: [], total: 0, next: null };
    const { rows } = await this.pool.query<{ total: number; entry: RevisionEntry | null }>(
      `SELECT counted.total, row_to_json(page) AS entry
       FROM (SELECT count(*) AS total FROM revisions WHERE portfolio_id = $1) counted
       LEFT JOIN LATERAL (
         SELECT ${REVISION_COLUMNS} FROM revisions
         WHERE portfolio_id = $1 AND ($2::integer IS NULL OR revision < $2)
         ORDER BY revision DESC LIMIT $3
       ) page ON true
       ORDER BY page.revision DESC`,
      [portfolioId, before, pageSize + 1],
    );
    return pageOf(rows, pageSize, (entry) => entry.revision);
  }

  async revision(portfolioId: string, revision: number): Promise<RevisionEntry | undefined> {
    if (!storable(portfolioId)) return undefined;
    const { rows } = await this.pool.query<RevisionEntry>(
      `SELECT ${REVISION_COLUMNS} FROM revisions WHERE portfolio_id = $1 AND revision = $2`,
      [portfolioId, revision],
    );
    return rows[0];
  }

  async pruneRevisions(policy: RetentionPolicy): Promise<number> {
    const keepNewest = Math.max(1, policy.keepNewest);
    // Portfolios with more revisions than the newest N; only their older ones can go.
    const { rows } = await this.pool.query<{ portfolio_id: string }>(
      `SELECT portfolio_id FROM revisions GROUP BY portfolio_id HAVING count(*) > $1`,
      [keepNewest],
    );
    let removed = 0;
    for (let start = 0; start < rows.length; start += BATCH) {
      const ids = rows.slice(start, start + BATCH).map((row) => row.portfolio_id);
      removed += await this.writing(async (client) => {
        await client.query('SELECT 1 FROM library FOR UPDATE');
        const result = await client.query(
          `DELETE FROM revisions r
           USING (
             SELECT id, (SELECT revision FROM revisions WHERE portfolio_id = id
                         ORDER BY revision DESC OFFSET $2 - 1 LIMIT 1) AS oldest_kept
             FROM unnest($1::text[]) AS id
           ) kept
           WHERE r.portfolio_id = kept.id AND r.revision < kept.oldest_kept
             AND r.modified_time < $3`,
          [ids, keepNewest, policy.keepSince],
        );
        return result.rowCount ?? 0;
      });
    }
    return removed;
  }

  async changesSince(since: number, limit: number): Promise<ChangePage> {
    // One statement, one snapshot: the horizon and the changes agree with each other.
    const { rows } = await this.pool.query<{
      horizon: number;
      last_seq: number;
      seq: number | null;
      portfolio_id: string;
      revision: number;
      record: StoredPortfolio | null;
    }>(
      `SELECT library.horizon, library.seq AS last_seq, feed.*
       FROM library LEFT JOIN LATERAL (
         SELECT * FROM (
           (SELECT seq, portfolio_id, revision, record FROM portfolios
            WHERE seq > $1 ORDER BY seq LIMIT $2)
           UNION ALL
           (SELECT seq, portfolio_id, revision, NULL FROM trash
            WHERE seq > $1 ORDER BY seq LIMIT $2)
           UNION ALL
           (SELECT seq, portfolio_id, revision, NULL FROM tombstones
            WHERE seq > $1 ORDER BY seq LIMIT $2)
         ) places ORDER BY seq LIMIT $2
       ) feed ON true
       ORDER BY feed.seq`,
      [since, limit + 1],
    );
    const horizon = rows[0]!.horizon;
    // 0 is the full read a resync starts again with: it never needs a forgotten tombstone.
    if (since > 0 && since < horizon) throw new ResyncRequiredError(since, horizon);
    // A cursor past the last change: this database was restored from an older copy.
    const lastSeq = Number(rows[0]!.last_seq);
    if (since > lastSeq) throw new FeedBehindError(since, lastSeq, horizon);
    const changes = rows.flatMap((row): Change[] => {
      if (row.seq === null) return [];
      const { seq, portfolio_id: portfolioId, revision, record } = row;
      return record
        ? [{ seq, portfolioId, revision, deleted: false, portfolio: record }]
        : [{ seq, portfolioId, revision, deleted: true }];
    });
    const page = changes.slice(0, limit);
    return { changes: page, next: page.at(-1)?.seq ?? since, hasMore: changes.length > limit };
  }

  forgetTombstones(purgedBefore: number): Promise<number> {
    return this.writing(async (client) => {
      await client.query('SELECT 1 FROM library FOR UPDATE');
      const { rows } = await client.query<{ forgotten: number }>(
        `WITH gone AS (DELETE FROM tombstones WHERE purged_time < $1 RETURNING seq),
              moved AS (UPDATE library SET horizon = GREATEST(horizon, (SELECT max(seq) FROM gone)))
         SELECT count(*) AS forgotten FROM gone`,
        [purgedBefore],
      );
      return rows[0]!.forgotten;
    });
  }

  async referencedBlobs(): Promise<Set<string>> {
    const { rows } = await this.pool.query<{ sha256: string }>(
      'SELECT DISTINCT unnest(blobs) AS sha256 FROM revisions',
    );
    return new Set(rows.map((row) => row.sha256));
  }

  async isBlobReferenced(sha256: string): Promise<boolean> {
    const { rows } = await this.pool.query<{ referenced: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM revisions WHERE blobs @> ARRAY[$1::text]) AS referenced',
      [sha256],
    );
    return rows[0]!.referenced;
  }

  // ---- internals ----

  /** Runs `work` in a transaction holding the next seq; see the class invariants. */
  private change<T>(work: (client: pg.PoolClient, seq: number) => Promise<T>): Promise<T> {
    return this.writing(async (client) => {
      const { rows } = await client.query<{ seq: number }>(
        'UPDATE library SET seq = seq + 1 RETURNING seq',
      );
      return work(client, rows[0]!.seq);
    });
  }

  /** A writing transaction, after this instance's earlier ones (see the class invariants). */
  private writing<T>(work: (client: pg.PoolClient) => Promise<T>, atomic = false): Promise<T> {
    return this.writes.run(work, atomic);
  }

  /**
   * Writes `stored` as the live record and its revision; with history off, the revision it
   * supersedes goes.
   */
  private liveWrites(stored: StoredPortfolio, meta: ChangeMeta, previous: number | undefined) {
    const writes: Write[] = [(p) => upsertLive(p, stored), (p) => insertRevision(p, stored, meta)];
    if (!this.keepHistory && previous !== undefined) {
      writes.push(
        (p) =>
          `DELETE FROM revisions WHERE portfolio_id = ${p.add(stored.portfolioId)}
           AND revision = ${p.add(previous)}`,
      );
    }
    return writes;
  }
}

/**
 * Runs several writes as one statement (data-modifying CTEs): one round trip while the library
 * lock is held. They touch different rows and see one snapshot, so their order does not matter.
 */
async function write(client: pg.PoolClient, writes: Write[]): Promise<void> {
  const p = new Parameters();
  const parts = writes.map((statement, index) => `w${index} AS (${statement(p)})`);
  await client.query(`WITH ${parts.join(',\n')} SELECT 1`, p.values);
}

/** The typed columns of a live record: what the list orders and filters on. */
export function liveColumns(record: StoredPortfolio): Record<string, unknown> {
  const columns: Record<string, unknown> = {};
  for (const [key, column] of FIELD_COLUMNS) columns[column] = record[key];
  return {
    ...columns,
    record: JSON.stringify(record),
    seq: record.seq,
    title_key: utf16Key(textSortValue(record.projectTitle)),
    title_lower: record.projectTitle.toLowerCase(),
    category_lower: foldCase(record.category),
    category_key: utf16Key(textSortValue(record.category)),
    created_by: record.createdBy,
    modified_by: record.modifiedBy,
    ...searchColumns(record),
  };
}

/** The field table's columns: each field that a column of its own holds as is. */
const FIELD_COLUMNS = fieldKeysWhere((row) => row.column !== undefined).map(
  (key) => [key, (PORTFOLIO_FIELDS[key] as FieldRow).column!] as const,
);

/** A seq no library reaches: marks where the seq goes in a record's JSON text. */
const SEQ_MARK = Number.MAX_SAFE_INTEGER;
/** Creates per statement at most. */
const MAX_CREATES = 50;

interface PendingCreate {
  record: PortfolioRecord;
  meta: ChangeMeta;
  /** The stored record's JSON text before and after its seq. */
  head: string;
  tail: string;
}

interface QueuedCreate extends PendingCreate {
  resolve: (stored: StoredPortfolio) => void;
  reject: (error: unknown) => void;
}

type CreateOutcome = { ok: true; value: StoredPortfolio } | { ok: false; error: unknown };

/**
 * The stored record's JSON text as `JSON.stringify` makes it, split where its seq goes, so SQL
 * can put in the seq it takes and the record reads back byte for byte as the step-by-step path
 * writes it. Undefined when the marker is not found exactly once, or the id cannot be stored.
 */
function pendingCreate(record: PortfolioRecord, meta: ChangeMeta): PendingCreate | undefined {
  if (!storable(record.portfolioId)) return undefined;
  const marked: StoredPortfolio = {
    ...record,
    seq: SEQ_MARK,
    createdBy: meta.by,
    modifiedBy: meta.by,
  };
  const parts = JSON.stringify(marked).split(`"seq":${SEQ_MARK}`);
  if (parts.length !== 2) return undefined;
  return { record, meta, head: `${parts[0]}"seq":`, tail: parts[1]! };
}

const storedOf = (create: PendingCreate, seq: number): StoredPortfolio => ({
  ...create.record,
  seq,
  createdBy: create.meta.by,
  modifiedBy: create.meta.by,
});

const uniqueIds = (creates: readonly PendingCreate[]) =>
  new Set(creates.map((create) => create.record.portfolioId)).size === creates.length;

/** bytea in its text form, as json_populate_recordset reads it. */
const byteaText = (bytes: unknown) => `\\x${(bytes as Buffer).toString('hex')}`;

/**
 * Creates in one statement: under the library row's lock, the ids already live or trashed are
 * left out, the others take the next seqs in order and are written with their first revisions
 * (a tombstone of the same id goes). Answers each create's outcome, in order.
 */
async function createsTogether(
  client: pg.PoolClient,
  creates: readonly PendingCreate[],
): Promise<CreateOutcome[]> {
  const live = creates.map((create) => {
    const columns = liveColumns(storedOf(create, 0));
    delete columns.seq;
    delete columns.record;
    return {
      ...columns,
      title_key: byteaText(columns.title_key),
      category_key: byteaText(columns.category_key),
    };
  });
  const extra = creates.map((create, index) => ({
    ord: index + 1,
    head: create.head,
    tail: create.tail,
    rev_time: create.meta.time,
    rev_by: create.meta.by,
    command: create.meta.command,
    changed_fields: create.meta.changedFields,
    blobs: [...new Set(filesOf(create.record).map((file) => file.sha256))],
  }));
  const names = Object.keys(live[0]!);
  const { rows } = await client.query<{ ord: number; seq: number }>(
    `WITH input AS (
       SELECT l.*, x.*
       FROM json_populate_recordset(NULL::portfolios, $1::json) WITH ORDINALITY AS l
       JOIN json_to_recordset($2::json) AS x(ord bigint, head text, tail text, rev_time bigint,
         rev_by text, command text, changed_fields text[], blobs text[])
         ON x.ord = l.ordinality
     ), fresh AS (
       SELECT i.*, row_number() OVER (ORDER BY i.ord) AS n, count(*) OVER () AS fresh_count
       FROM input i
       WHERE NOT EXISTS (SELECT 1 FROM portfolios p WHERE p.portfolio_id = i.portfolio_id)
         AND NOT EXISTS (SELECT 1 FROM trash t WHERE t.portfolio_id = i.portfolio_id)
     ), lib AS (
       UPDATE library SET seq = seq + (SELECT count(*) FROM fresh) RETURNING seq
     ), stored AS (
       SELECT f.*, lib.seq - f.fresh_count + f.n AS new_seq,
         (f.head || (lib.seq - f.fresh_count + f.n) || f.tail)::json AS new_record
       FROM fresh f, lib
     ), tombstone AS (
       DELETE FROM tombstones WHERE portfolio_id IN (SELECT portfolio_id FROM stored)
     ), live AS (
       INSERT INTO portfolios (${names.join(', ')}, seq, record)
       SELECT ${names.join(', ')}, new_seq, new_record FROM stored
     ), revision AS (
       INSERT INTO revisions (portfolio_id, revision, seq, modified_time, modified_by, command,
         changed_fields, snapshot, blobs)
       SELECT portfolio_id, revision, new_seq, rev_time, rev_by, command, changed_fields,
         new_record, blobs
       FROM stored
     )
     SELECT ord, new_seq AS seq FROM stored`,
    [JSON.stringify(live), JSON.stringify(extra)],
  );
  const seqs = new Map(rows.map((row) => [Number(row.ord), row.seq]));
  return creates.map((create, index): CreateOutcome => {
    const seq = seqs.get(index + 1);
    return seq === undefined
      ? { ok: false, error: new PortfolioIdTakenError(create.record.portfolioId) }
      : { ok: true, value: storedOf(create, seq) };
  });
}

/** Each create in its own savepoint: one that fails in the database leaves the others. */
async function createsOneByOne(
  client: pg.PoolClient,
  creates: readonly PendingCreate[],
): Promise<CreateOutcome[]> {
  const outcomes: CreateOutcome[] = [];
  for (const create of creates) {
    await client.query('SAVEPOINT one_create');
    try {
      const [outcome] = await createsTogether(client, [create]);
      outcomes.push(outcome!);
    } catch (error) {
      await client.query('ROLLBACK TO SAVEPOINT one_create');
      // Another instance created the same id between this statement's snapshot and its lock.
      const taken = (error as { constraint?: string }).constraint === 'portfolios_pkey';
      outcomes.push({
        ok: false,
        error: taken ? new PortfolioIdTakenError(create.record.portfolioId) : error,
      });
    }
  }
  return outcomes;
}

function upsertLive(p: Parameters, record: StoredPortfolio): string {
  const columns = liveColumns(record);
  const names = Object.keys(columns);
  return `INSERT INTO portfolios (${names.join(', ')})
    VALUES (${names.map((name) => p.add(columns[name])).join(', ')})
    ON CONFLICT (portfolio_id) DO UPDATE SET
    ${names.map((name) => `${name} = EXCLUDED.${name}`).join(', ')}`;
}

function insertRevision(p: Parameters, stored: StoredPortfolio, meta: ChangeMeta): string {
  const blobs = [...new Set(filesOf(stored).map((file) => file.sha256))];
  return `INSERT INTO revisions (portfolio_id, revision, seq, modified_time, modified_by, command,
      changed_fields, snapshot, blobs)
    VALUES (${p.add(stored.portfolioId)}, ${p.add(stored.revision)}, ${p.add(stored.seq)},
      ${p.add(meta.time)}, ${p.add(meta.by)}, ${p.add(meta.command)},
      ${p.add(meta.changedFields)}::text[], ${p.add(JSON.stringify(stored))},
      ${p.add(blobs)}::text[])`;
}

type Queryable = Pick<pg.Pool, 'query'>;

/** The live record, if it is still at `expectedRevision` (any revision when undefined). */
async function live(
  client: Queryable,
  portfolioId: string,
  expectedRevision: number | undefined,
): Promise<StoredPortfolio> {
  if (!storable(portfolioId)) throw new PortfolioNotFoundError(portfolioId);
  const { rows } = await client.query<{ record: StoredPortfolio }>(
    'SELECT record FROM portfolios WHERE portfolio_id = $1',
    [portfolioId],
  );
  const current = rows[0]?.record;
  if (!current) throw new PortfolioNotFoundError(portfolioId);
  if (expectedRevision !== undefined && current.revision !== expectedRevision)
    throw new RevisionConflictError(portfolioId, current.revision, expectedRevision);
  return current;
}

async function trashed(client: Queryable, portfolioId: string): Promise<TrashEntry | undefined> {
  if (!storable(portfolioId)) return undefined;
  const { rows } = await client.query<TrashEntry>(
    `SELECT ${TRASH_COLUMNS} FROM trash WHERE portfolio_id = $1`,
    [portfolioId],
  );
  return rows[0];
}

/** A page of `limit + 1` rows: the extra row only says that more follow. */
function pageOf<T>(
  rows: ReadonlyArray<{ total: number; entry: T | null }>,
  pageSize: number,
  position: (entry: T) => number,
): Page<T> {
  const entries = rows.flatMap((row) => (row.entry ? [row.entry] : []));
  const items = entries.slice(0, pageSize);
  const more = entries.length > pageSize && items.length > 0;
  return {
    items,
    total: rows[0]?.total ?? 0,
    next: more ? String(position(items.at(-1)!)) : null,
  };
}

/** The repository stamps seq and authors; the revision is the caller's and must follow on. */
function assertFollows(next: PortfolioRecord, revision: number): void {
  if (next.revision !== revision + 1) {
    throw new RangeError(
      `A change from revision ${revision} must be revision ${revision + 1}, not ${next.revision}`,
    );
  }
}

/** History and trash cursors are the position of the last item: a positive integer. */
function parseCursor(cursor: string): number {
  if (!/^[1-9]\d{0,15}$/.test(cursor)) throw new InvalidCursorError(cursor);
  return Number(cursor);
}
