import type { MigrationBuilder } from 'node-pg-migrate';

/*
 * Schema version 3: device tokens of sync replicas (DESIGN §10).
 *
 * A table of their own, not rows of `sessions`: a device outlives what ends sessions (sweeps,
 * password resets, role changes, sign-outs), and a revoked device is kept so its token answers
 * DEVICE_REVOKED, even after its user is deleted (so `username` is no foreign key; deleting a
 * user revokes their devices in the same statement). Tokens are kept only as their SHA-256, like
 * session ids. A replica id belongs to at most one live device: the partial unique index makes
 * that hold across instances.
 */
export function up(pgm: MigrationBuilder): void {
  pgm.sql(`
    CREATE TABLE devices (
      id_hash text COLLATE "C" PRIMARY KEY,
      device_id text COLLATE "C" NOT NULL UNIQUE,
      username text COLLATE "C" NOT NULL,
      name text NOT NULL,
      replica_id text COLLATE "C" NOT NULL,
      created_date bigint NOT NULL,
      expired_date bigint NOT NULL,
      last_seen bigint NOT NULL,
      revoked_time bigint
    );
    CREATE INDEX devices_username ON devices (username) WHERE revoked_time IS NULL;
    CREATE UNIQUE INDEX devices_live_replica ON devices (replica_id) WHERE revoked_time IS NULL;
  `);
}

/** Schema changes only go forward: an older release refuses a newer database instead. */
export const down = false;
