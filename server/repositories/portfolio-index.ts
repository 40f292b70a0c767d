import type { FilterKey, OrderKey, PortfolioRecord } from '../../shared';
import type { Filter, ListScope, OrderTerm } from '../domain/list-query';
import type { Store } from '../storage/store';
import { Lru } from './lru';

/** A portfolio's position under one orderBy: its sort values, then its id. */
export type SortValue = string | number;
export interface Cursor {
  values: SortValue[];
  id: string;
}

export interface ListRequest extends ListScope {
  /** Start strictly after this position (the previous page's last item). */
  after: Cursor | null;
  limit: number;
}

export interface ListPage {
  items: PortfolioRecord[];
  /** Portfolios matching filter and visibility, on every page. */
  total: number;
  /** Position of the last item when more follow; null on the last page. */
  next: Cursor | null;
}

interface Entry {
  id: string;
  record: PortfolioRecord;
  values: SortValue[];
}

/** Keys whose exact values are looked up in maps instead of scanned. */
const MAPPED_KEYS = [
  'memberBarcode',
  'category',
  'readyToBuy',
  'relativeCategory',
  'certificateByOrg',
] as const satisfies readonly FilterKey[];
type MappedKey = (typeof MAPPED_KEYS)[number];
const isMapped = (key: FilterKey): key is MappedKey =>
  (MAPPED_KEYS as readonly string[]).includes(key);

/** Each sorted index costs about 100 bytes per portfolio; keep only the recently used ones. */
const MAX_SORTED_INDEXES = 6;
const MAX_CACHED_RESULTS = 64;

/**
 * Text sorts case-insensitively; the raw text after a NUL makes the order total and
 * deterministic (a keyset cursor needs that), and one string comparison does both.
 */
function sortValue(record: PortfolioRecord, key: OrderKey): SortValue {
  switch (key) {
    case 'createdTime':
      return record.createdTime;
    case 'modifiedTime':
      return record.modifiedTime;
    case 'staffPick':
      return record.staffPick ? 1 : 0;
    case 'projectTitle':
    case 'category':
      return `${record[key].toLowerCase()}\u0000${record[key]}`;
  }
}

const compareIds = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function comparator(order: readonly OrderTerm[]) {
  const directions = order.map((term) => (term.descending ? -1 : 1));
  return (aValues: SortValue[], aId: string, bValues: SortValue[], bId: string): number => {
    for (let index = 0; index < directions.length; index++) {
      const a = aValues[index]!;
      const b = bValues[index]!;
      if (a !== b) return (a < b ? -1 : 1) * directions[index]!;
    }
    return compareIds(aId, bId); // ties: portfolioId ascending, whatever the direction
  };
}

/** All portfolios sorted by one orderBy, kept sorted on every change (binary search + splice). */
class SortedIndex {
  readonly compare: ReturnType<typeof comparator>;
  readonly entries: Entry[];

  constructor(
    readonly order: readonly OrderTerm[],
    records: Iterable<PortfolioRecord>,
  ) {
    this.compare = comparator(order);
    this.entries = [...records].map((record) => this.entry(record));
    this.entries.sort((a, b) => this.compare(a.values, a.id, b.values, b.id));
  }

  entry(record: PortfolioRecord): Entry {
    const values = this.order.map((term) => sortValue(record, term.key));
    return { id: record.portfolioId, record, values };
  }

  /** Index of the first entry after `cursor` (or of `cursor` itself when `inclusive`). */
  seek(values: SortValue[], id: string, inclusive = false): number {
    let low = 0;
    let high = this.entries.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const entry = this.entries[middle]!;
      const sign = this.compare(entry.values, entry.id, values, id);
      if (sign < 0 || (sign === 0 && !inclusive)) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  remove(record: PortfolioRecord): void {
    const { values, id } = this.entry(record);
    const at = this.seek(values, id, true);
    if (this.entries[at]?.id === id) this.entries.splice(at, 1);
  }

  insert(record: PortfolioRecord): void {
    const entry = this.entry(record);
    this.entries.splice(this.seek(entry.values, entry.id), 0, entry);
  }
}

type Predicate = (record: PortfolioRecord) => boolean;

function compilePredicate(filter: Filter, visibleOnly: boolean): Predicate {
  const tests: Predicate[] = [];
  if (visibleOnly) tests.push((record) => record.published && record.active);
  for (const [key, values] of filter) {
    switch (key) {
      case 'memberBarcode':
      case 'category':
      case 'readyToBuy': {
        const wanted = new Set(values);
        tests.push((record) => wanted.has(record[key]));
        break;
      }
      case 'relativeCategory':
      case 'certificateByOrg': {
        const wanted = new Set(values);
        tests.push((record) => record[key].some((value) => wanted.has(value)));
        break;
      }
      case 'staffPick':
      case 'published':
      case 'active': {
        if (values.length > 1) break; // true OR false: no constraint
        const wanted = values[0] === 'true';
        tests.push((record) => record[key] === wanted);
        break;
      }
      case 'projectTitle': {
        const needles = values.map((value) => value.toLowerCase());
        tests.push((record) => {
          const title = record.projectTitle.toLowerCase();
          return needles.some((needle) => title.includes(needle));
        });
        break;
      }
    }
  }
  // Called for every entry a page walks past: no array callback when one test or none will do.
  if (tests.length === 0) return () => true;
  if (tests.length === 1) return tests[0]!;
  return (record) => {
    for (const test of tests) if (!test(record)) return false;
    return true;
  };
}

/**
 * Answers list queries without sorting or scanning the whole collection per request:
 * - one sorted index per orderBy in use (built on first use, then kept up to date through
 *   `store.onChange`, so cold start does not pay for it);
 * - value → ids maps for the exact-match filter keys;
 * - totals and small sorted match lists cached until the next change to any portfolio.
 * A page is read by walking the orderBy's index from the cursor, or, when an exact-match key
 * narrows the candidates enough, by sorting just those candidates.
 */
export class PortfolioIndex {
  private readonly sorted = new Lru<SortedIndex>(MAX_SORTED_INDEXES);
  private readonly valueMaps = new Map<MappedKey, Map<string, Set<string>>>();
  private readonly totals = new Lru<{ version: number; total: number }>(MAX_CACHED_RESULTS);
  private readonly matchLists = new Lru<{ version: number; entries: Entry[] }>(8);
  /** Bumped on every change to a portfolio; cached answers of older versions are stale. */
  private changes = 0;

  constructor(
    private readonly records: ReadonlyMap<string, PortfolioRecord>,
    store: Store,
  ) {
    store.onChange((col, _key, prev, next) => {
      if (col === 'portfolios')
        this.onChange(prev as PortfolioRecord | undefined, next as PortfolioRecord | undefined);
    });
  }

  private onChange(prev: PortfolioRecord | undefined, next: PortfolioRecord | undefined): void {
    this.changes++;
    for (const index of this.sorted.values()) {
      if (prev) index.remove(prev);
      if (next) index.insert(next);
    }
    for (const [key, map] of this.valueMaps) {
      if (prev) for (const value of valuesOf(prev, key)) map.get(value)?.delete(prev.portfolioId);
      if (next) for (const value of valuesOf(next, key)) addTo(map, value, next.portfolioId);
    }
  }

  /** Changes seen so far: an answer built at one version is current until this moves on. */
  get version(): number {
    return this.changes;
  }

  query(request: ListRequest): ListPage {
    const predicate = compilePredicate(request.filter, request.visibleOnly);
    const resultKey = `${request.visibleOnly ? 'v' : 's'}|${request.filterKey}`;
    const candidates = this.narrowestCandidates(request.filter);
    if (candidates && candidates.size === 0) return { items: [], total: 0, next: null };

    const n = this.records.size;
    const m = candidates?.size ?? n;
    // Expected entries a walk visits to fill a page, against sorting the candidates.
    const walkCost = m === 0 ? n : (request.limit * n) / m;
    const sortCost = m * Math.log2(m + 1);
    if (candidates && sortCost < walkCost) {
      return this.pageFromCandidates(request, candidates, predicate, resultKey);
    }
    const index = this.sortedIndex(request.order, request.orderKey);
    const page = this.walk(index, request, predicate);
    return { ...page, total: this.total(resultKey, predicate, candidates) };
  }

  private walk(index: SortedIndex, request: ListRequest, predicate: Predicate) {
    const { entries } = index;
    const start = request.after ? index.seek(request.after.values, request.after.id) : 0;
    const items: PortfolioRecord[] = [];
    let last: Entry | null = null;
    for (let at = start; at < entries.length; at++) {
      const entry = entries[at]!;
      if (!predicate(entry.record)) continue;
      if (items.length === request.limit) return { items, next: cursorOf(last!) };
      items.push(entry.record);
      last = entry;
    }
    return { items, next: null };
  }

  private pageFromCandidates(
    request: ListRequest,
    candidates: ReadonlySet<string>,
    predicate: Predicate,
    resultKey: string,
  ): ListPage {
    const key = `${request.orderKey}|${resultKey}`;
    let cached = this.matchLists.use(key);
    const template = new SortedIndex(request.order, []);
    if (cached?.version !== this.changes) {
      const entries: Entry[] = [];
      for (const id of candidates) {
        const record = this.records.get(id);
        if (record && predicate(record)) entries.push(template.entry(record));
      }
      entries.sort((a, b) => template.compare(a.values, a.id, b.values, b.id));
      cached = { version: this.changes, entries };
      this.matchLists.put(key, cached);
    }
    const { entries } = cached;
    let start = 0;
    if (request.after) {
      const { values, id } = request.after;
      let high = entries.length;
      while (start < high) {
        const middle = (start + high) >>> 1;
        const entry = entries[middle]!;
        if (template.compare(entry.values, entry.id, values, id) <= 0) start = middle + 1;
        else high = middle;
      }
    }
    const end = Math.min(start + request.limit, entries.length);
    const page = entries.slice(start, end);
    return {
      items: page.map((entry) => entry.record),
      total: entries.length,
      next: end < entries.length && page.length > 0 ? cursorOf(page.at(-1)!) : null,
    };
  }

  private total(key: string, predicate: Predicate, candidates: ReadonlySet<string> | null): number {
    const cached = this.totals.use(key);
    if (cached?.version === this.changes) return cached.total;
    let total = 0;
    if (candidates) {
      for (const id of candidates) {
        const record = this.records.get(id);
        if (record && predicate(record)) total++;
      }
    } else {
      for (const record of this.records.values()) if (predicate(record)) total++;
    }
    this.totals.put(key, { version: this.changes, total });
    return total;
  }

  /** The ids that can match the exact-match key with the fewest of them, if the filter has one. */
  private narrowestCandidates(filter: Filter): ReadonlySet<string> | null {
    let best: ReadonlySet<string> | null = null;
    for (const [key, values] of filter) {
      if (!isMapped(key)) continue;
      const map = this.valueMap(key);
      const sets = values.map((value) => map.get(value)).filter((set) => set !== undefined);
      let union: ReadonlySet<string>;
      if (sets.length === 0) union = new Set();
      else if (sets.length === 1) union = sets[0]!;
      else union = new Set(sets.flatMap((set) => [...set]));
      if (!best || union.size < best.size) best = union;
    }
    return best;
  }

  private valueMap(key: MappedKey): Map<string, Set<string>> {
    let map = this.valueMaps.get(key);
    if (!map) {
      map = new Map();
      for (const record of this.records.values())
        for (const value of valuesOf(record, key)) addTo(map, value, record.portfolioId);
      this.valueMaps.set(key, map);
    }
    return map;
  }

  private sortedIndex(order: readonly OrderTerm[], key: string): SortedIndex {
    let index = this.sorted.use(key);
    if (!index) {
      index = new SortedIndex(order, this.records.values());
      this.sorted.put(key, index);
    }
    return index;
  }
}

function valuesOf(record: PortfolioRecord, key: MappedKey): readonly string[] {
  const value = record[key];
  return typeof value === 'string' ? [value] : value;
}

function addTo(map: Map<string, Set<string>>, value: string, id: string): void {
  let set = map.get(value);
  if (!set) map.set(value, (set = new Set()));
  set.add(id);
}

const cursorOf = (entry: Entry): Cursor => ({ values: entry.values, id: entry.id });
