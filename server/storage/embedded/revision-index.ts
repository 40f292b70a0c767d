import type { Store } from './store';

interface RevisionKeyed {
  portfolioId: string;
  revision: number;
}

/**
 * The revision numbers kept for each portfolio, ascending; derived from the `revisions`
 * collection and kept in step through `store.onChange` (rollbacks included). New revisions
 * arrive at the end and retention removes from the front, so the splices are short.
 *
 * A portfolio with one revision (most of them: every one never edited) keeps just the number:
 * an array each took about 170 bytes at 100k portfolios (the array and the backing store a first
 * insert grows to 17 slots), 17 MB in all, against nothing for a number in the Map's own slot.
 */
export class RevisionIndex {
  private readonly byPortfolio = new Map<string, number | number[]>();

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
    return listOf(this.byPortfolio.get(portfolioId));
  }

  *portfolios(): Generator<[string, readonly number[]]> {
    for (const [portfolioId, kept] of this.byPortfolio) yield [portfolioId, listOf(kept)];
  }

  private add({ portfolioId, revision }: RevisionKeyed): void {
    const kept = this.byPortfolio.get(portfolioId);
    if (kept === undefined) {
      this.byPortfolio.set(portfolioId, revision);
      return;
    }
    const list = typeof kept === 'number' ? [kept] : kept;
    const at = lowerBound(list, revision);
    if (list[at] !== revision) list.splice(at, 0, revision);
    if (list !== kept && list.length > 1) this.byPortfolio.set(portfolioId, list);
  }

  private remove({ portfolioId, revision }: RevisionKeyed): void {
    const kept = this.byPortfolio.get(portfolioId);
    if (kept === undefined) return;
    if (typeof kept === 'number') {
      if (kept === revision) this.byPortfolio.delete(portfolioId);
      return;
    }
    const at = lowerBound(kept, revision);
    if (kept[at] === revision) kept.splice(at, 1);
    if (kept.length === 1) this.byPortfolio.set(portfolioId, kept[0]!);
  }
}

const listOf = (kept: number | number[] | undefined): readonly number[] =>
  kept === undefined ? [] : typeof kept === 'number' ? [kept] : kept;

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
