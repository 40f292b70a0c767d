import type { MigrationBuilder } from 'node-pg-migrate';

/*
 * Schema version 10: share links of portfolios (DESIGN §15).
 *
 * The token is kept only as its SHA-256 (`token_hash`, unique: one lookup per open). No foreign
 * key to the portfolio: a share outlives a deleted portfolio (its link then answers 410), and a
 * revoked share is kept so its link answers 410 rather than 404.
 */
export function up(pgm: MigrationBuilder): void {
  pgm.sql(`
    CREATE TABLE shares (
      share_id text COLLATE "C" PRIMARY KEY,
      portfolio_id text COLLATE "C" NOT NULL,
      token_hash text COLLATE "C" NOT NULL UNIQUE,
      password_hash text,
      expires_at bigint NOT NULL,
      max_uses integer,
      uses integer NOT NULL DEFAULT 0,
      created_time bigint NOT NULL,
      created_by text NOT NULL,
      revoked_time bigint
    );
    CREATE INDEX shares_portfolio ON shares (portfolio_id) WHERE revoked_time IS NULL;
  `);
}

/** Schema changes only go forward: an older release refuses a newer database instead. */
export const down = false;
