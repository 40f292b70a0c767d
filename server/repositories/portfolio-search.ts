import MiniSearch from 'minisearch';
import type { PortfolioRecord } from '../../shared';
import { matchesAllTerms, searchWords } from '../domain/search-text';
import { Lru } from './lru';

/** The fields `q` searches (docs/API.md). */
export const SEARCH_FIELDS = [
  'projectTitle',
  'aboutProject',
  'projectDetail',
  'generalTag',
  'occasion',
  'memberBarcode',
] as const satisfies ReadonlyArray<keyof PortfolioRecord>;

/** Portfolios indexed per step of the background build; a list waits at most one step. */
const BUILD_STEP = 2000;
const MAX_MATCH_SETS = 128;

export interface Ranked {
  id: string;
  score: number;
}

/** Every word of the searched fields of a portfolio, as search sees them. */
export function wordsOf(record: PortfolioRecord): Set<string> {
  const words = new Set<string>();
  for (const field of SEARCH_FIELDS)
    for (const word of searchWords(fieldText(record, field))) words.add(word);
  return words;
}

function fieldText(record: PortfolioRecord, field: string): string {
  const value = record[field as keyof PortfolioRecord];
  return Array.isArray(value) ? value.join(' ') : typeof value === 'string' ? value : '';
}

/**
 * Full-text search over the portfolios (MiniSearch: an inverted index over a radix tree, so a
 * prefix finds its words without a scan). Kept up to date on every change, never rebuilt per
 * request. The set of ids matching a search is kept for the recent searches and updated on each
 * change by testing just the changed portfolio, so a popular search costs a lookup.
 *
 * The index is built in steps after start, so the server answers lists at once; a search that
 * comes before the build is done finishes it first.
 */
export class PortfolioSearch {
  private readonly index = new MiniSearch<PortfolioRecord>({
    idField: 'portfolioId',
    fields: [...SEARCH_FIELDS],
    storeFields: [],
    extractField: fieldText,
    tokenize: searchWords,
    processTerm: (term) => term, // searchWords has folded it already
  });
  private readonly matchSets = new Lru<Set<string>>(MAX_MATCH_SETS);
  private ranked: { version: number; searchKey: string; ranked: Ranked[] } | null = null;
  /** Ids not indexed yet by the background build. */
  private pending: string[] | null;
  private version = 0;

  constructor(private readonly records: ReadonlyMap<string, PortfolioRecord>) {
    this.pending = [...records.keys()];
  }

  /** Starts the background build; each step yields to requests in between. */
  buildInBackground(): void {
    const step = () => {
      if (this.pending === null) return;
      this.indexPending(BUILD_STEP);
      if (this.pending !== null) setImmediate(step);
    };
    setImmediate(step);
  }

  private indexPending(limit: number): void {
    const pending = this.pending!;
    const end = Math.max(0, pending.length - limit);
    for (let at = pending.length - 1; at >= end; at--) {
      const id = pending[at]!;
      const record = this.records.get(id);
      // Changed since start: already indexed by onChange (or deleted).
      if (record && !this.index.has(id)) this.index.add(record);
    }
    pending.length = end;
    if (end === 0) this.pending = null;
  }

  private ready(): void {
    if (this.pending !== null) this.indexPending(this.pending.length);
  }

  onChange(
    prev: PortfolioRecord | undefined,
    next: PortfolioRecord | undefined,
    nextWords: () => Set<string>,
  ): void {
    this.version++;
    const id = (prev ?? next)!.portfolioId;
    if (prev && this.index.has(id)) this.index.remove(prev);
    // Before the build reaches a portfolio, indexing it now or later is the same.
    if (next) this.index.add(next);
    for (const [key, ids] of this.matchSets) {
      ids.delete(id);
      if (next && matchesAllTerms(nextWords(), key.split(' '))) ids.add(id);
    }
  }

  /** Ids of the portfolios matching every term (prefixes, case and accents folded). */
  matches(terms: readonly string[], searchKey: string): ReadonlySet<string> {
    let ids = this.matchSets.use(searchKey);
    if (ids === undefined) {
      ids = new Set(this.search(terms).map((result) => result.id));
      this.matchSets.put(searchKey, ids);
    }
    return ids;
  }

  /** Matches best first (ties by portfolioId), as of the latest change. */
  rank(terms: readonly string[], searchKey: string): Ranked[] {
    const cached = this.ranked;
    if (cached?.version === this.version && cached.searchKey === searchKey) return cached.ranked;
    const ranked = this.search(terms)
      .map((result) => ({ id: result.id as string, score: result.score }))
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    this.ranked = { version: this.version, searchKey, ranked };
    return ranked;
  }

  private search(terms: readonly string[]) {
    this.ready();
    // Terms are words already: the index's tokenizer leaves them as they are.
    return this.index.search(terms.join(' '), { prefix: true, combineWith: 'AND' });
  }
}
