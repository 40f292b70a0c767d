import type pg from 'pg';
import {
  byCreation,
  type ShareRecord,
  type ShareRepository,
} from '../../repositories/share-repository-contract';

interface ShareRow {
  share_id: string;
  portfolio_id: string;
  token_hash: string;
  password_hash: string | null;
  expires_at: string;
  max_uses: number | null;
  uses: number;
  created_time: string;
  created_by: string;
  revoked_time: string | null;
}

/** bigint columns come back as strings; timestamps fit a double exactly. */
const recordOf = (row: ShareRow): ShareRecord => ({
  shareId: row.share_id,
  portfolioId: row.portfolio_id,
  tokenHash: row.token_hash,
  passwordHash: row.password_hash,
  expiresAt: Number(row.expires_at),
  maxUses: row.max_uses,
  uses: row.uses,
  createdTime: Number(row.created_time),
  createdBy: row.created_by,
  revokedTime: row.revoked_time === null ? null : Number(row.revoked_time),
});

/**
 * Share links in PostgreSQL (migration 0009). Every change is one statement; `use` checks and
 * counts in the same UPDATE, so racing opens on any instance never pass `max_uses`.
 */
export class PgShareRepository implements ShareRepository {
  constructor(private readonly pool: pg.Pool) {}

  async insert(share: ShareRecord): Promise<void> {
    await this.pool.query(
      `INSERT INTO shares (share_id, portfolio_id, token_hash, password_hash, expires_at, max_uses,
         uses, created_time, created_by, revoked_time)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
        share.shareId,
        share.portfolioId,
        share.tokenHash,
        share.passwordHash,
        share.expiresAt,
        share.maxUses,
        share.uses,
        share.createdTime,
        share.createdBy,
        share.revokedTime,
      ],
    );
  }

  private async one(where: string, value: string): Promise<ShareRecord | undefined> {
    const { rows } = await this.pool.query<ShareRow>(`SELECT * FROM shares WHERE ${where} = $1`, [
      value,
    ]);
    return rows[0] && recordOf(rows[0]);
  }

  get(shareId: string): Promise<ShareRecord | undefined> {
    return this.one('share_id', shareId);
  }

  byTokenHash(tokenHash: string): Promise<ShareRecord | undefined> {
    return this.one('token_hash', tokenHash);
  }

  async listOf(portfolioId: string): Promise<ShareRecord[]> {
    const { rows } = await this.pool.query<ShareRow>(
      'SELECT * FROM shares WHERE portfolio_id = $1 AND revoked_time IS NULL',
      [portfolioId],
    );
    return rows.map(recordOf).sort(byCreation);
  }

  async revoke(shareId: string, now: number): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      'UPDATE shares SET revoked_time = $2 WHERE share_id = $1 AND revoked_time IS NULL',
      [shareId, now],
    );
    return rowCount === 1;
  }

  async use(shareId: string, now: number): Promise<ShareRecord | undefined> {
    const { rows } = await this.pool.query<ShareRow>(
      `UPDATE shares SET uses = uses + 1
       WHERE share_id = $1 AND revoked_time IS NULL AND expires_at > $2
         AND (max_uses IS NULL OR uses < max_uses)
       RETURNING *`,
      [shareId, now],
    );
    return rows[0] && recordOf(rows[0]);
  }
}
