import type { MigrationBuilder } from 'node-pg-migrate';

/*
 * Schema version 1: everything the embedded store keeps, as tables.
 *
 * Records are kept whole as `json` (not `jsonb`): the repository only ever reads them back whole,
 * and `json` keeps the text exactly as written (key order, every escape), so a record reads back
 * byte for byte and content hashes agree across backends. What the list orders and filters on is
 * copied into typed columns, written from the same record in the same statement.
 *
 * Sort keys (`*_key`) are bytea holding UTF-16BE of `lower(text) + NUL + text`: bytea compares as
 * memcmp, and memcmp over UTF-16BE is exactly JavaScript's string order, so the database sorts
 * text exactly as the embedded index does, whatever the database's collation. Identifiers are
 * ASCII (shared/schemas/common.ts), so `COLLATE "C"` orders them as JavaScript does.
 */
export function up(pgm: MigrationBuilder): void {
  pgm.sql(`
    CREATE EXTENSION IF NOT EXISTS pg_trgm;

    -- One row: who this library is, its change counter (the one source of seq) and the feed's
    -- horizon (the newest seq of a forgotten tombstone).
    CREATE TABLE library (
      singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
      library_id text NOT NULL,
      seq bigint NOT NULL DEFAULT 0,
      horizon bigint NOT NULL DEFAULT 0
    );
    INSERT INTO library (library_id) VALUES (gen_random_uuid()::text);

    CREATE TABLE portfolios (
      portfolio_id text COLLATE "C" PRIMARY KEY,
      record json NOT NULL,
      revision integer NOT NULL,
      seq bigint NOT NULL UNIQUE,
      created_time bigint NOT NULL,
      modified_time bigint NOT NULL,
      title_key bytea NOT NULL,
      title_lower text COLLATE "C" NOT NULL,
      category text COLLATE "C" NOT NULL,
      category_key bytea NOT NULL,
      member_barcode text COLLATE "C" NOT NULL,
      ready_to_buy text COLLATE "C" NOT NULL,
      staff_pick boolean NOT NULL,
      published boolean NOT NULL,
      active boolean NOT NULL,
      relative_category text[] COLLATE "C" NOT NULL,
      certificate_by_org text[] COLLATE "C" NOT NULL,
      created_by text NOT NULL,
      modified_by text NOT NULL
    );
    -- DESIGN §4 orders, each with the portfolioId tie-break. A descending key scans the same
    -- index backwards and sorts only within equal keys (incremental sort), so one per key serves
    -- both directions; several keys use the first key's index the same way.
    CREATE INDEX portfolios_created ON portfolios (created_time, portfolio_id);
    CREATE INDEX portfolios_modified ON portfolios (modified_time, portfolio_id);
    CREATE INDEX portfolios_title ON portfolios (title_key, portfolio_id);
    CREATE INDEX portfolios_category_order ON portfolios (category_key, portfolio_id);
    CREATE INDEX portfolios_staff_pick ON portfolios (staff_pick, portfolio_id);
    -- What viewers see (published and active): their default order, and their total counted
    -- from this index alone.
    CREATE INDEX portfolios_visible ON portfolios (created_time, portfolio_id)
      WHERE published AND active;
    -- Filters: exact keys, array containment, case-insensitive substring of the title.
    CREATE INDEX portfolios_category ON portfolios (category);
    CREATE INDEX portfolios_member_barcode ON portfolios (member_barcode);
    CREATE INDEX portfolios_ready_to_buy ON portfolios (ready_to_buy);
    CREATE INDEX portfolios_relative_category ON portfolios USING gin (relative_category);
    CREATE INDEX portfolios_certificate_by_org ON portfolios USING gin (certificate_by_org);
    CREATE INDEX portfolios_title_lower ON portfolios USING gin (title_lower gin_trgm_ops);

    -- Every kept revision with its full snapshot, the current one included: the blobs a library
    -- references are exactly those of its kept revisions (live and trashed records are the
    -- current revision of theirs, which retention never removes).
    CREATE TABLE revisions (
      portfolio_id text COLLATE "C" NOT NULL,
      revision integer NOT NULL,
      seq bigint NOT NULL,
      modified_time bigint NOT NULL,
      modified_by text NOT NULL,
      command text NOT NULL,
      changed_fields text[] NOT NULL,
      snapshot json NOT NULL,
      blobs text[] COLLATE "C" NOT NULL,
      PRIMARY KEY (portfolio_id, revision)
    );
    CREATE INDEX revisions_blobs ON revisions USING gin (blobs);

    CREATE TABLE trash (
      portfolio_id text COLLATE "C" PRIMARY KEY,
      seq bigint NOT NULL UNIQUE,
      revision integer NOT NULL,
      project_title text NOT NULL,
      category text NOT NULL,
      deleted_time bigint NOT NULL,
      deleted_by text NOT NULL,
      snapshot json NOT NULL
    );
    CREATE INDEX trash_deleted_time ON trash (deleted_time);

    -- What remains of a purged portfolio, for the change feed.
    CREATE TABLE tombstones (
      portfolio_id text COLLATE "C" PRIMARY KEY,
      seq bigint NOT NULL UNIQUE,
      revision integer NOT NULL,
      deleted_time bigint NOT NULL,
      purged_time bigint NOT NULL
    );
    CREATE INDEX tombstones_purged_time ON tombstones (purged_time);

    CREATE TABLE users (
      username text COLLATE "C" PRIMARY KEY,
      role text NOT NULL,
      record json NOT NULL
    );

    -- Sessions by the SHA-256 of their id, never the id itself.
    CREATE TABLE sessions (
      id_hash text COLLATE "C" PRIMARY KEY,
      username text COLLATE "C" NOT NULL REFERENCES users (username) ON DELETE CASCADE,
      created_date bigint NOT NULL,
      expired_date bigint NOT NULL,
      last_seen bigint NOT NULL
    );
    CREATE INDEX sessions_username ON sessions (username);
    CREATE INDEX sessions_expired_date ON sessions (expired_date);

    -- Failed sign-ins per key (address and username, or address), shared by every instance.
    CREATE TABLE sign_in_attempts (
      key text COLLATE "C" PRIMARY KEY,
      failures integer NOT NULL,
      window_start bigint NOT NULL,
      blocked_until bigint NOT NULL
    );

    -- Request counters of the rate limiter, one row per key and window.
    CREATE TABLE rate_limits (
      key text COLLATE "C" PRIMARY KEY,
      hits integer NOT NULL,
      reset_at bigint NOT NULL
    );
    CREATE INDEX rate_limits_reset_at ON rate_limits (reset_at);

    -- Instance-wide settings, e.g. the page-token secret every instance signs with.
    CREATE TABLE settings (
      key text COLLATE "C" PRIMARY KEY,
      value json NOT NULL
    );
  `);
}

/** Schema changes only go forward: an older release refuses a newer database instead. */
export const down = false;
