import type { PortfolioRecord } from '../../../shared';
import type { Store } from './store';

/**
 * The ids of live portfolios that hold an open sync conflict (DESIGN §10): built when the store
 * opens and kept in step through its change listener (rollbacks included), so listing conflicts
 * costs the conflicted few, never a read of every record.
 */
export class ConflictIndex {
  private readonly conflicted = new Set<string>();

  constructor(store: Store) {
    for (const [id, record] of store.collection<PortfolioRecord>('portfolios')) {
      if (hasConflicts(record)) this.conflicted.add(id);
    }
    store.onChange((col, key, _prev, next) => {
      if (col !== 'portfolios') return;
      if (next && hasConflicts(next as PortfolioRecord)) this.conflicted.add(key);
      else this.conflicted.delete(key);
    });
  }

  /** The ids, in portfolioId order. */
  ids(): string[] {
    return [...this.conflicted].sort();
  }
}

function hasConflicts(record: PortfolioRecord): boolean {
  return (record.conflicts?.length ?? 0) > 0;
}
