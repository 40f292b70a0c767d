/** A share link of one portfolio (DESIGN §15), as every backend keeps it. */
export interface ShareRecord {
  shareId: string;
  portfolioId: string;
  /** SHA-256 (hex) of the link's token: the token itself is never stored. */
  tokenHash: string;
  /** The password's scrypt hash (server/auth/password.ts), or null for none. */
  passwordHash: string | null;
  expiresAt: number;
  /** null: no limit. */
  maxUses: number | null;
  uses: number;
  createdTime: number;
  createdBy: string;
  /** When it was revoked; kept so its link answers 410, not 404. */
  revokedTime: number | null;
}

/**
 * Share links in every backend. One contract suite (test/server/contract/share-repository.contract.ts)
 * runs against each implementation.
 *
 * Invariants:
 * - A change is visible to every later call on any instance once its promise resolves.
 * - `use` is atomic across instances: a link with `maxUses` N is used at most N times, however
 *   many opens race.
 */
export interface ShareRepository {
  /** Stores a new share. */
  insert(share: ShareRecord): Promise<void>;
  get(shareId: string): Promise<ShareRecord | undefined>;
  /** The share whose token hashes to `tokenHash`, revoked or not. */
  byTokenHash(tokenHash: string): Promise<ShareRecord | undefined>;
  /** The portfolio's shares not revoked, oldest first (then by shareId). */
  listOf(portfolioId: string): Promise<ShareRecord[]>;
  /** Revokes a share not revoked yet; false when there was no such live share. */
  revoke(shareId: string, now: number): Promise<boolean>;
  /**
   * Counts one use if the share is neither revoked, expired at `now`, nor used up: answers the
   * share as it is after the use, or undefined (nothing changed) when it may not be used.
   */
  use(shareId: string, now: number): Promise<ShareRecord | undefined>;
}

/** Whether the share may be opened at `now`, and if not, why. */
export function shareState(
  share: Pick<ShareRecord, 'expiresAt' | 'maxUses' | 'uses' | 'revokedTime'>,
  now: number,
): 'active' | 'expired' | 'usedUp' | 'revoked' {
  if (share.revokedTime !== null) return 'revoked';
  if (share.expiresAt <= now) return 'expired';
  if (share.maxUses !== null && share.uses >= share.maxUses) return 'usedUp';
  return 'active';
}

/** The order shares are listed in, on every backend. */
export const byCreation = (a: ShareRecord, b: ShareRecord) =>
  a.createdTime - b.createdTime || (a.shareId < b.shareId ? -1 : a.shareId > b.shareId ? 1 : 0);
