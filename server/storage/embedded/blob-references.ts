import type { PortfolioRecord } from '../../../shared';
import { filesOf } from '../../domain/portfolio-files';
import type { CollectionName, Store } from './store';

type RecordOf = (value: unknown) => PortfolioRecord | undefined;

/** Where each collection that can refer to blobs keeps the record that does. */
const RECORD_OF: Partial<Record<CollectionName, RecordOf>> = {
  portfolios: (value) => value as PortfolioRecord,
  trash: (value) => (value as { snapshot: PortfolioRecord }).snapshot,
  // The current revision has no snapshot of its own: the live or trashed record is it.
  revisions: (value) => (value as { snapshot?: PortfolioRecord }).snapshot,
};

/**
 * How many file entries point at each blob, over live portfolios, the trash and kept revisions:
 * built when the store opens and kept in step through its change listener (rollbacks included),
 * so it can never disagree with the database.
 */
export class BlobReferences {
  private readonly counts = new Map<string, number>();

  constructor(store: Store) {
    for (const [name, pick] of Object.entries(RECORD_OF) as [CollectionName, RecordOf][]) {
      for (const value of store.collection(name).values()) this.add(pick(value), 1);
    }
    store.onChange((col, _key, prev, next) => {
      const pick = RECORD_OF[col];
      if (!pick) return;
      if (prev) this.add(pick(prev), -1);
      if (next) this.add(pick(next), 1);
    });
  }

  has(sha256: string): boolean {
    return this.counts.has(sha256);
  }

  all(): Set<string> {
    return new Set(this.counts.keys());
  }

  private add(record: PortfolioRecord | undefined, delta: 1 | -1): void {
    for (const file of record ? filesOf(record) : []) {
      const count = (this.counts.get(file.sha256) ?? 0) + delta;
      if (count > 0) this.counts.set(file.sha256, count);
      else this.counts.delete(file.sha256);
    }
  }
}
