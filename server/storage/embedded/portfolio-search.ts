import SearchableMap from 'minisearch/SearchableMap';
import type { PortfolioRecord } from '../../../shared';
import { matchesAllTerms, searchWords } from '../../domain/search-text';
import { Lru } from '../../lib/lru';
import { Bits, type Slots } from './slot-bits';

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
/**
 * Testing a portfolio's text for one term costs about an eighth of indexing its words (measured:
 * 12–14 ms against 84–110 ms of CPU for the words alone at 10k portfolios). Searches before the
 * build is done test the text while that has cost less than what is left of the build; then the
 * build is finished, so many different terms early on never cost more than about two builds.
 */
const SCANS_PER_INDEXING = 8;
/** Terms' and queries' match sets kept up to date (bitsets: 12.5 kB each at 100k portfolios). */
const MAX_DERIVED_SETS = 256;

/**
 * A word's set becomes a bitset once it holds this many portfolios and 1/32 of them: then the
 * bitset is the smaller (a Set takes about 10 bytes an entry at best, a bitset 1 bit a slot).
 */
const BITS_FROM = 512;
/** One portfolio's slot (most words of titles and details are in one portfolio), or several. */
type Posting = number | Set<number> | Bits;

function bitsOf(slots: Set<number>, capacity: number): Bits {
  const bits = Bits.ofCapacity(capacity);
  for (const slot of slots) bits.add(slot);
  return bits;
}

export interface Ranked {
  id: string;
  score: number;
}

function fieldText(record: PortfolioRecord, field: (typeof SEARCH_FIELDS)[number]): string {
  const value = record[field];
  return Array.isArray(value) ? value.join(' ') : value;
}

const ASCII_TEXT = /^[\p{ASCII}]*$/u;
const ASCII_WORD_CHAR = /[a-z0-9]/;

/**
 * Does `text` have a word that begins with `term` (or, `whole`, is it)? The same answer as
 * searching the words of `searchWords(text)`, without making them: on ASCII text those words
 * are the runs of [a-z0-9], so it looks for an occurrence of the term at the start of one.
 */
function hasWordIn(text: string, term: string, whole: boolean): boolean {
  if (!ASCII_TEXT.test(text)) {
    const words = searchWords(text);
    return words.some((word) => (whole ? word === term : word.startsWith(term)));
  }
  const lower = text.toLowerCase();
  for (let at = lower.indexOf(term); at !== -1; at = lower.indexOf(term, at + 1)) {
    if (at > 0 && ASCII_WORD_CHAR.test(lower[at - 1]!)) continue;
    const end = at + term.length;
    if (!whole || end === lower.length || !ASCII_WORD_CHAR.test(lower[end]!)) return true;
  }
  return false;
}

/**
 * Does a portfolio have a word that begins with `term` (or, `whole`, is it)? The same answer as
 * `matchesAllTerms(wordsOf(record), [term])` (or `wordsOf(record).has(term)`) at a fraction of
 * its cost: for a search that comes before the word index is built, and for ranking.
 */
export function hasWordStartingWith(record: PortfolioRecord, term: string, whole = false): boolean {
  for (const field of SEARCH_FIELDS)
    if (hasWordIn(fieldText(record, field), term, whole)) return true;
  return false;
}

function wordsNotIn(words: ReadonlySet<string>, others: ReadonlySet<string>): string[] {
  const only: string[] = [];
  for (const word of words) if (!others.has(word)) only.push(word);
  return only;
}

/**
 * Does one portfolio, whose words are `words`, have a word that begins with `term`? Each term is
 * tested once however many queries name it: a change tests the same few terms for every kept set
 * and count. `terms.every(matcher)` is `matchesAllTerms(words(), terms)`.
 */
export function termMatcher(words: () => ReadonlySet<string>): (term: string) => boolean {
  const known = new Map<string, boolean>();
  return (term) => {
    let match = known.get(term);
    if (match === undefined) known.set(term, (match = matchesAllTerms(words(), [term])));
    return match;
  };
}

/** Every word of the searched fields of a portfolio, as search sees them. */
export function wordsOf(record: PortfolioRecord): Set<string> {
  const words = new Set<string>();
  for (const field of SEARCH_FIELDS)
    for (const word of searchWords(fieldText(record, field))) words.add(word);
  return words;
}

/**
 * Full-text search over the portfolios: an inverted index from each word to the slots (see
 * Slots) of the portfolios that have it, the words kept in MiniSearch's radix tree
 * (SearchableMap), so a prefix finds its words without a scan. MiniSearch's own index was
 * measured first (see bench/README.md): at 100k portfolios it took 7 s of CPU to build and
 * 215 MB, and a search scored every match (200 ms for a common prefix); a list ordered by
 * `orderBy` needs only the set of matches.
 *
 * - A query's matches are a bitset: per term the union of its words' sets, per query the
 *   intersection of its terms'. Both are kept for the recent terms and queries and updated on
 *   each change by testing just the changed portfolio, so a search costs a lookup, and a new
 *   combination of terms an AND of bitsets (a word of 32 portfolios at a time): never a walk
 *   over the matches. A bitset's size is kept with it: the total of a search is never counted.
 * - Kept up to date on every change, never rebuilt per request. Built in steps after start, so
 *   the server answers lists at once. A search that comes before the build is done does not
 *   wait for it: its terms' sets are made by testing each portfolio's text for them (about a
 *   tenth of the build's cost), and kept up to date from then on like any other.
 */
export class PortfolioSearch {
  /** Per word, its portfolios' slots: a Set while few have it, a bitset once many do. */
  private readonly words = new SearchableMap<Posting>();
  private readonly derived = new Lru<Bits>(MAX_DERIVED_SETS);
  private ranked: { version: number; searchKey: string; ranked: Ranked[] } | null = null;
  /** Ids not indexed yet by the background build. */
  private pending: string[] | null;
  private readonly indexed = new Set<string>();
  private building = false;
  private version = 0;
  /** Portfolios tested by searches that came before the build was done. */
  private scanned = 0;

  constructor(
    private readonly records: ReadonlyMap<string, PortfolioRecord>,
    private readonly slots: Slots,
    /** For tests: BITS_FROM. */
    private readonly bitsFrom = BITS_FROM,
    /** For tests: the word index is never built, so every search tests the portfolios' text. */
    private readonly neverBuilt = false,
  ) {
    this.pending = records.size > 0 || neverBuilt ? [...records.keys()] : null;
  }

  /** Starts the background build (once); each step yields to requests in between. */
  buildInBackground(): void {
    if (this.building) return;
    this.building = true;
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

  private add(id: string, words: Iterable<string>): void {
    if (this.pending !== null) this.indexed.add(id);
    const slot = this.slots.of(id);
    for (const word of words) {
      const slots = this.words.get(word);
      if (slots === undefined) this.words.set(word, slot);
      else if (typeof slots === 'number') {
        if (slots !== slot) this.words.set(word, new Set([slots, slot]));
      } else if (slots instanceof Bits) slots.add(slot);
      else if (slots.size < this.bitsFrom || slots.size * 32 < this.slots.capacity) slots.add(slot);
      else this.words.set(word, bitsOf(slots, this.slots.capacity).add(slot));
    }
  }

  private remove(id: string, words: Iterable<string>): void {
    this.indexed.delete(id);
    const slot = this.slots.of(id);
    for (const word of words) {
      const slots = this.words.get(word);
      if (slots === undefined) continue;
      if (typeof slots === 'number') {
        if (slots === slot) this.words.delete(word);
        continue;
      }
      slots.delete(slot);
      if (slots.size === 0) this.words.delete(word);
    }
  }

  /** Before the owner takes back the slot of a deleted portfolio (see Slots). */
  onChange(
    prev: PortfolioRecord | undefined,
    next: PortfolioRecord | undefined,
    prevWords: () => Set<string>,
    nextWords: () => Set<string>,
  ): void {
    this.version++;
    const id = (prev ?? next)!.portfolioId;
    // Before the build reaches a portfolio it is in no set: nothing to remove.
    if (prev && next && (this.pending === null || this.indexed.has(id))) {
      // Only the words that came or went: most of a changed portfolio's words are still there.
      const before = prevWords();
      const after = nextWords();
      this.remove(id, wordsNotIn(before, after));
      this.add(id, wordsNotIn(after, before));
    } else {
      if (prev && (this.pending === null || this.indexed.has(id))) this.remove(id, prevWords());
      if (next) this.add(id, nextWords());
    }
    if (this.derived.size === 0) return;
    const slot = this.slots.of(id);
    const matches = next ? termMatcher(nextWords) : null;
    for (const [key, bits] of this.derived) {
      bits.delete(slot);
      // A key is one term, or the terms of a query joined by spaces.
      if (matches && (key.includes(' ') ? key.split(' ').every(matches) : matches(key)))
        bits.add(slot);
    }
  }

  /** Slots of the portfolios matching every term (prefixes, case and accents folded). */
  matches(terms: readonly string[], searchKey: string): Bits {
    if (terms.length === 1) return this.termMatches(terms[0]!);
    let bits = this.derived.use(searchKey);
    if (bits === undefined) {
      const [first, ...others] = terms.map((term) => this.termMatches(term));
      bits = first!.and(...others);
      this.derived.put(searchKey, bits);
    }
    return bits;
  }

  private termMatches(term: string): Bits {
    let bits = this.derived.use(term);
    if (bits === undefined && this.pending !== null && !this.scanIsCheaper())
      this.indexPending(this.pending.length);
    if (bits === undefined && this.pending !== null) {
      // The word index is still being built: one pass over the portfolios' text.
      this.scanned += this.records.size;
      bits = Bits.ofCapacity(this.records.size);
      for (const [id, record] of this.records)
        if (hasWordStartingWith(record, term)) bits.add(this.slots.of(id));
      this.derived.put(term, bits);
    } else if (bits === undefined) {
      bits = Bits.ofCapacity(this.slots.capacity);
      for (const slots of this.words.atPrefix(term).values()) {
        if (typeof slots === 'number') bits.add(slots);
        else if (slots instanceof Bits) bits.orInPlace(slots);
        else for (const slot of slots) bits.add(slot);
      }
      this.derived.put(term, bits);
    }
    return bits;
  }

  /** Has testing every portfolio's text for a term cost less than finishing the build would? */
  private scanIsCheaper(): boolean {
    const scans = (this.scanned + this.records.size) / SCANS_PER_INDEXING;
    return this.neverBuilt || scans <= this.pending!.length;
  }

  /**
   * Matches best first (ties by portfolioId), as of the latest change: per term, a whole word
   * counts more than a prefix, and a word of the title more than one elsewhere.
   */
  rank(terms: readonly string[], searchKey: string): Ranked[] {
    const cached = this.ranked;
    if (cached?.version === this.version && cached.searchKey === searchKey) return cached.ranked;
    const ranked: Ranked[] = [];
    for (const slot of this.matches(terms, searchKey).slots()) {
      const id = this.slots.idAt(slot)!;
      const record = this.records.get(id);
      if (record) ranked.push({ id, score: score(record, terms) });
    }
    ranked.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    this.ranked = { version: this.version, searchKey, ranked };
    return ranked;
  }
}

function score(record: PortfolioRecord, terms: readonly string[]): number {
  let total = 0;
  for (const term of terms) {
    if (hasWordIn(record.projectTitle, term, true)) total += 4;
    else if (hasWordIn(record.projectTitle, term, false)) total += 2;
    else if (hasWordStartingWith(record, term, true)) total += 1;
    else total += 0.5;
  }
  return total;
}
