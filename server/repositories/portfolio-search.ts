import SearchableMap from 'minisearch/SearchableMap';
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
const BUILD_STEP = 500;
/** Unions (a prefix of several words) and intersections (several terms) kept up to date. */
const MAX_DERIVED_SETS = 64;
const EMPTY: ReadonlySet<string> = new Set();

export interface Ranked {
  id: string;
  score: number;
}

function fieldText(record: PortfolioRecord, field: (typeof SEARCH_FIELDS)[number]): string {
  const value = record[field];
  return Array.isArray(value) ? value.join(' ') : value;
}

/** Every word of the searched fields of a portfolio, as search sees them. */
export function wordsOf(record: PortfolioRecord): Set<string> {
  const words = new Set<string>();
  for (const field of SEARCH_FIELDS)
    for (const word of searchWords(fieldText(record, field))) words.add(word);
  return words;
}

/**
 * Full-text search over the portfolios: an inverted index from each word to the ids of the
 * portfolios that have it, the words kept in MiniSearch's radix tree (SearchableMap), so a prefix
 * finds its words without a scan. MiniSearch's own index was measured first (see bench/README.md):
 * at 100k portfolios it took 7 s of CPU to build and 215 MB, and a search scored every match
 * (200 ms for a common prefix); a list ordered by `orderBy` needs only the set of matches.
 *
 * - A term's matches are the set of its word when it is a whole word and the prefix of no other;
 *   otherwise the union of its words' sets. A query's are the intersection of its terms'. Both
 *   kinds of derived set are kept for the recent searches and updated on each change by testing
 *   just the changed portfolio, so a popular search costs a lookup.
 * - Kept up to date on every change, never rebuilt per request. Built in steps after start, so
 *   the server answers lists at once; a search that comes before the build is done finishes it.
 */
export class PortfolioSearch {
  private readonly words = new SearchableMap<Set<string>>();
  private readonly derived = new Lru<Set<string>>(MAX_DERIVED_SETS);
  private ranked: { version: number; searchKey: string; ranked: Ranked[] } | null = null;
  /** Ids not indexed yet by the background build. */
  private pending: string[] | null;
  private readonly indexed = new Set<string>();
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
      if (record && !this.indexed.has(id)) this.add(id, wordsOf(record));
    }
    pending.length = end;
    if (end === 0) {
      this.pending = null;
      this.indexed.clear(); // only needed while building
    }
  }

  private ready(): void {
    if (this.pending !== null) this.indexPending(this.pending.length);
  }

  private add(id: string, words: Iterable<string>): void {
    if (this.pending !== null) this.indexed.add(id);
    for (const word of words) {
      let ids = this.words.get(word);
      if (ids === undefined) this.words.set(word, (ids = new Set()));
      ids.add(id);
    }
  }

  private remove(id: string, words: Iterable<string>): void {
    this.indexed.delete(id);
    for (const word of words) {
      const ids = this.words.get(word);
      ids?.delete(id);
      if (ids?.size === 0) this.words.delete(word);
    }
  }

  onChange(
    prev: PortfolioRecord | undefined,
    next: PortfolioRecord | undefined,
    prevWords: () => Set<string>,
    nextWords: () => Set<string>,
  ): void {
    this.version++;
    const id = (prev ?? next)!.portfolioId;
    // Before the build reaches a portfolio it is in no set: nothing to remove.
    if (prev && (this.pending === null || this.indexed.has(id))) this.remove(id, prevWords());
    if (next) this.add(id, nextWords());
    for (const [key, ids] of this.derived) {
      ids.delete(id);
      if (next && matchesAllTerms(nextWords(), key.split(' '))) ids.add(id);
    }
  }

  /** Ids of the portfolios matching every term (prefixes, case and accents folded). */
  matches(terms: readonly string[], searchKey: string): ReadonlySet<string> {
    this.ready();
    if (terms.length === 1) return this.termMatches(terms[0]!);
    let ids = this.derived.use(searchKey);
    if (ids === undefined) {
      const sets = terms.map((term) => this.termMatches(term)).sort((a, b) => a.size - b.size);
      const [smallest, ...others] = sets;
      ids = new Set();
      for (const id of smallest!) if (others.every((set) => set.has(id))) ids.add(id);
      this.derived.put(searchKey, ids);
    }
    return ids;
  }

  private termMatches(term: string): ReadonlySet<string> {
    const cached = this.derived.use(term);
    if (cached) return cached;
    const words = this.words.atPrefix(term);
    if (words.size === 0) return EMPTY;
    // The word itself and no longer one: its own set, kept up to date by add and remove.
    if (words.size === 1 && words.has(term)) return words.get(term)!;
    const union = new Set<string>();
    for (const ids of words.values()) for (const id of ids) union.add(id);
    this.derived.put(term, union);
    return union;
  }

  /**
   * Matches best first (ties by portfolioId), as of the latest change: per term, a whole word
   * counts more than a prefix, and a word of the title more than one elsewhere.
   */
  rank(terms: readonly string[], searchKey: string): Ranked[] {
    const cached = this.ranked;
    if (cached?.version === this.version && cached.searchKey === searchKey) return cached.ranked;
    const ranked: Ranked[] = [];
    for (const id of this.matches(terms, searchKey)) {
      const record = this.records.get(id);
      if (record) ranked.push({ id, score: score(record, terms) });
    }
    ranked.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    this.ranked = { version: this.version, searchKey, ranked };
    return ranked;
  }
}

function score(record: PortfolioRecord, terms: readonly string[]): number {
  const title = new Set(searchWords(record.projectTitle));
  const all = wordsOf(record);
  let total = 0;
  for (const term of terms) {
    if (title.has(term)) total += 4;
    else if (matchesAllTerms(title, [term])) total += 2;
    else if (all.has(term)) total += 1;
    else total += 0.5;
  }
  return total;
}
