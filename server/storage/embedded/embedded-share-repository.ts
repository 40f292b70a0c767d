import {
  byCreation,
  shareState,
  type ShareRecord,
  type ShareRepository,
} from '../../repositories/share-repository-contract';
import type { Store } from './store';

/**
 * Share links in the embedded store, keyed by shareId. Few exist, so lookups by token scan them.
 * A check and its commit happen in one turn (the store applies a commit to memory at once), so
 * two opens of a link with one use left cannot both count.
 */
export class EmbeddedShareRepository implements ShareRepository {
  constructor(private readonly store: Store) {}

  private all(): Iterable<ShareRecord> {
    return this.store.collection<ShareRecord>('shares').values();
  }

  async insert(share: ShareRecord): Promise<void> {
    await this.store.commit([{ type: 'put', col: 'shares', key: share.shareId, value: share }]);
  }

  async get(shareId: string): Promise<ShareRecord | undefined> {
    return this.store.get<ShareRecord>('shares', shareId);
  }

  async byTokenHash(tokenHash: string): Promise<ShareRecord | undefined> {
    for (const share of this.all()) if (share.tokenHash === tokenHash) return share;
    return undefined;
  }

  async listOf(portfolioId: string): Promise<ShareRecord[]> {
    return [...this.all()]
      .filter((share) => share.portfolioId === portfolioId && share.revokedTime === null)
      .sort(byCreation);
  }

  async revoke(shareId: string, now: number): Promise<boolean> {
    const share = this.store.get<ShareRecord>('shares', shareId);
    if (!share || share.revokedTime !== null) return false;
    await this.put({ ...share, revokedTime: now });
    return true;
  }

  async use(shareId: string, now: number): Promise<ShareRecord | undefined> {
    const share = this.store.get<ShareRecord>('shares', shareId);
    if (!share || shareState(share, now) !== 'active') return undefined;
    const used = { ...share, uses: share.uses + 1 };
    await this.put(used);
    return used;
  }

  private put(share: ShareRecord): Promise<void> {
    return this.store.commit([{ type: 'put', col: 'shares', key: share.shareId, value: share }]);
  }
}
