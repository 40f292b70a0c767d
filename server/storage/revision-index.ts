import type { Store } from './store';

interface RevisionKeyed {
  portfolioId: string;
  revision: number;
}

/**
 * The revision numbers kept for each portfolio, ascending; derived from the `revisions`
 * collection and kept in step through `store.onChange` (rollbacks included). New revisions
 * arrive at the end and retention removes from the front, so the splices are short.
 */
export class RevisionIndex {
  private readonly byPortfolio = new Map<string, number[]>();

  constructor(store: Store) {
    for (const entry of store.collection<RevisionKeyed>('revisions').values()) this.add(entry);
    store.onChange((col, _key, prev, next) => {
      if (col !== 'revisions') return;
      if (prev) this.remove(prev as RevisionKeyed);
      if (next) this.add(next as RevisionKeyed);
    });
  }

  /** Ascending revision numbers of one portfolio (empty when it has none). */
  of(portfolioId: string): readonly number[] {
    return this.byPortfolio.get(portfolioId) ?? [];
  }

  portfolios(): IterableIterator<[string, readonly number[]]> {
    return this.byPortfolio.entries();
  }

  private add({ portfolioId, revision }: RevisionKeyed): void {
    let list = this.byPortfolio.get(portfolioId);
    if (!list) this.byPortfolio.set(portfolioId, (list = []));
    const at = lowerBound(list, revision);
    if (list[at] !== revision) list.splice(at, 0, revision);
  }

  private remove({ portfolioId, revision }: RevisionKeyed): void {
    const list = this.byPortfolio.get(portfolioId);
    if (!list) return;
    const at = lowerBound(list, revision);
    if (list[at] === revision) list.splice(at, 1);
    if (list.length === 0) this.byPortfolio.delete(portfolioId);
  }
}

/** Index of the first element ≥ value in an ascending list. */
export function lowerBound(list: readonly number[], value: number): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (list[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
}
