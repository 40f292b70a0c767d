import { FACET_KEYS, type FacetKey, type PortfolioRecord } from '../../../shared';
import type { FacetCounts } from '../../domain/facets';

/** How many portfolios have a value, and how many of those viewers see (published, active). */
interface Count {
  total: number;
  visible: number;
}

/** A record's distinct values under a facet key (an array may name a value twice). */
function valuesOf(record: PortfolioRecord, key: FacetKey): Iterable<string> {
  const value = record[key];
  return Array.isArray(value) ? new Set(value) : [value];
}

/**
 * Counts of each stored value of the facet keys. The index keeps one for the whole library, up
 * to date on every write (`change`), so facets without a filter or search never count rows; a
 * filtered request makes one over its matches.
 */
export class FacetTally {
  private readonly byKey = new Map<FacetKey, Map<string, Count>>();

  constructor(private readonly keys: readonly FacetKey[] = FACET_KEYS) {
    for (const key of keys) this.byKey.set(key, new Map());
  }

  static of(records: Iterable<PortfolioRecord>): FacetTally {
    const tally = new FacetTally();
    for (const record of records) tally.add(record, 1);
    return tally;
  }

  /** Counts `record` in (`sign` 1) or out (-1). */
  add(record: PortfolioRecord, sign: 1 | -1): void {
    const visible = record.published && record.active ? sign : 0;
    for (const [key, counts] of this.byKey)
      for (const value of valuesOf(record, key)) {
        const count = counts.get(value);
        if (count === undefined) counts.set(value, { total: sign, visible });
        else {
          count.total += sign;
          count.visible += visible;
          if (count.total === 0) counts.delete(value);
        }
      }
  }

  change(prev: PortfolioRecord | undefined, next: PortfolioRecord | undefined): void {
    if (prev) this.add(prev, -1);
    if (next) this.add(next, 1);
  }

  /** The counts of `keys` (of all portfolios, or of those viewers see), without zeros. */
  counts(keys: readonly FacetKey[], visibleOnly: boolean): FacetCounts {
    const answer: FacetCounts = {};
    for (const key of keys) {
      const values = new Map<string, number>();
      for (const [value, count] of this.byKey.get(key) ?? []) {
        const n = visibleOnly ? count.visible : count.total;
        if (n > 0) values.set(value, n);
      }
      answer[key] = values;
    }
    return answer;
  }
}
