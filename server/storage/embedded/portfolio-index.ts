import {
  CASE_FOLDED_KEYS,
  fieldKeysWhere,
  foldCase,
  PORTFOLIO_FIELDS,
  type KeysWith,
  type PortfolioRecord,
} from '../../../shared';
import type { FacetCounts } from '../../domain/facets';
import { RELEVANCE, type Cursor, type Filter } from '../../domain/list-query';
import type {
  FacetRequest,
  ListPage,
  ListRequest,
} from '../../repositories/portfolio-repository-contract';
import { FacetTally } from './facet-tally';
import type { Store } from './store';
import { Lru } from '../../lib/lru';
import { PortfolioSearch, termMatcher, wordsOf } from './portfolio-search';
import { Bits, Slots } from './slot-bits';
import {
  buildSortedTree,
  buildTree,
  cursorOf,
  emptyTree,
  probeOf,
  rowComparator,
  rowOf,
  type OrderSpec,
  type Row,
  type RowTree,
  visitRowsAfter,
} from './sorted-rows';

/**
 * Exact-match keys whose values partition the portfolios, plus `visible` (published and active:
 * what a viewer may see), which answers a viewer's list like any other filter.
 */
type FilteredKey = KeysWith<'filter', { readonly kind: 'exact' | 'array' | 'flag' }>;
const PARTITION_KEYS = [
  ...fieldKeysWhere((row) => row.filter !== undefined && row.filter.kind !== 'contains'),
  'visible',
] as ReadonlyArray<FilteredKey | 'visible'>;
type PartitionKey = (typeof PARTITION_KEYS)[number];
const isPartitionKey = (key: string): key is PartitionKey =>
  (PARTITION_KEYS as readonly string[]).includes(key);
/** Keys of arrays: a portfolio can be in several of their partitions. */
const ARRAY_KEYS: ReadonlySet<PartitionKey> = new Set(
  fieldKeysWhere((row) => row.filter?.kind === 'array') as FilteredKey[],
);

/** A record's values under a key, as the filter compares them (case-folded keys folded). */
function valuesOf(record: PortfolioRecord, key: PartitionKey): readonly string[] {
  if (key === 'visible') return [String(record.published && record.active)];
  if (CASE_FOLDED_KEYS.has(key)) return [foldCase(String(record[key]))];
  const value = record[key];
  return Array.isArray(value) ? value : [String(value)];
}

/** Orders kept at a time: each costs one tree entry per portfolio per partition key in use. */
const MAX_ORDERS = 12;
/** Totals of filter combinations that no one partition answers, kept up to date on writes. */
const MAX_COUNTS = 1024;

/**
 * The portfolios with one value of a key (or all of them): their ids, and a tree of their rows
 * per order in use, each built on first use and then kept up to date on every change.
 */
class Partition {
  readonly ids = new Set<string>();
  private readonly trees = new Map<string, RowTree>();
  /** Its members as a bitset, made when a count needs it and then kept up to date. */
  private members: Bits | null = null;

  add(row: Row): void {
    this.ids.add(row.id);
    this.members?.add(row.slot);
    for (const tree of this.trees.values()) tree.set(row, undefined);
  }

  /** `row` is absent when no row was made for the portfolio yet: then no tree holds it. */
  remove(id: string, slot: number, row: Row | undefined): void {
    this.ids.delete(id);
    this.members?.delete(slot);
    if (row) for (const tree of this.trees.values()) tree.delete(row);
  }

  /**
   * A member changed and stays a member: in the trees of orders whose sort values did not change
   * (`unmoved`) the new row takes the old one's place (`set` on an equal key replaces the key),
   * one descent instead of a delete and an insert; in the others it moves.
   */
  change(before: Row, after: Row, unmoved: ReadonlySet<string>): void {
    for (const [orderKey, tree] of this.trees) {
      if (!unmoved.has(orderKey)) tree.delete(before);
      tree.set(after, undefined);
    }
  }

  bits(slots: Slots): Bits {
    if (this.members === null) {
      this.members = Bits.ofCapacity(slots.capacity);
      for (const id of this.ids) this.members.add(slots.of(id));
    }
    return this.members;
  }

  tree(spec: OrderSpec, rows: Rows): RowTree {
    let tree = this.trees.get(spec.key);
    if (tree === undefined) {
      tree =
        this.ids.size === 0
          ? emptyTree(spec)
          : buildTree(
              Array.from(this.ids, (id) => rows.get(id)!),
              spec,
            );
      this.trees.set(spec.key, tree);
    }
    return tree;
  }

  hasTree(orderKey: string): boolean {
    return this.trees.has(orderKey);
  }

  /** A tree made elsewhere from this partition's rows, in the order of `orderKey`. */
  setTree(orderKey: string, tree: RowTree): void {
    this.trees.set(orderKey, tree);
  }

  forget(orderKey: string): void {
    this.trees.delete(orderKey);
  }
}

/**
 * Rows made on first need and kept until the portfolio changes: a cold start makes rows only for
 * the portfolios its first pages touch. Invariant: every row in a tree is the cached one.
 */
class Rows {
  private readonly cache = new Map<string, Row>();

  constructor(
    private readonly records: ReadonlyMap<string, PortfolioRecord>,
    private readonly slots: Slots,
  ) {}

  get size(): number {
    return this.records.size;
  }

  ids(): IterableIterator<string> {
    return this.records.keys();
  }

  get(id: string): Row | undefined {
    let row = this.cache.get(id);
    if (row === undefined) {
      const record = this.records.get(id);
      if (record === undefined) return undefined;
      this.cache.set(id, (row = rowOf(record, this.slots.of(id))));
    }
    return row;
  }

  /** The row made before a change (the store has already applied it to the records). */
  cached(id: string): Row | undefined {
    return this.cache.get(id);
  }

  replace(id: string, next: PortfolioRecord | undefined): Row | undefined {
    if (next === undefined) {
      this.cache.delete(id);
      return undefined;
    }
    const row = rowOf(next, this.slots.of(id));
    this.cache.set(id, row);
    return row;
  }
}

type RecordTest = (record: PortfolioRecord) => boolean;

/** The conditions of a filter and visibility that no partition answers, as one test. */
function residualTest(filter: Filter): RecordTest | null {
  const titles = filter.get('projectTitle')?.map((value) => value.toLowerCase());
  if (!titles) return null;
  return (record) => {
    const title = record.projectTitle.toLowerCase();
    return titles.some((needle) => title.includes(needle));
  };
}

/** Every condition of a filter and visibility, on one record. */
function recordTest(constraints: readonly Constraint[], residual: RecordTest | null): RecordTest {
  const tests = constraints.map(constraintTest);
  if (residual) tests.push(residual);
  if (tests.length === 0) return () => true;
  if (tests.length === 1) return tests[0]!;
  return (record) => {
    for (const test of tests) if (!test(record)) return false;
    return true;
  };
}

interface Constraint {
  key: PartitionKey;
  values: readonly string[];
}

/** One condition on a record, without building its values (this runs for every row walked). */
function constraintTest({ key, values }: Constraint): RecordTest {
  const wanted = new Set(values);
  if (key === 'visible') {
    const value = values[0] === 'true';
    return (record) => (record.published && record.active) === value;
  }
  switch (PORTFOLIO_FIELDS[key].filter.kind) {
    case 'exact': {
      const field = key as KeysWith<'filter', { readonly kind: 'exact' }>;
      if (CASE_FOLDED_KEYS.has(field)) return (record) => wanted.has(foldCase(record[field]));
      return (record) => wanted.has(record[field]);
    }
    case 'array': {
      const field = key as KeysWith<'filter', { readonly kind: 'array' }>;
      return (record) => record[field].some((value) => wanted.has(value));
    }
    case 'flag': {
      const field = key as KeysWith<'filter', { readonly kind: 'flag' }>;
      const value = values[0] === 'true';
      return (record) => record[field] === value;
    }
  }
}

/** The partition-key conditions of a request: the same key's values OR, different keys AND. */
function constraintsOf(filter: Filter, visibleOnly: boolean): Constraint[] {
  const constraints: Constraint[] = [];
  for (const [key, values] of filter) {
    if (!isPartitionKey(key)) continue;
    const boolean = key === 'staffPick' || key === 'published' || key === 'active';
    if (boolean && values.length > 1) continue; // true OR false: no condition at all
    // parseFilter folds them already; folding again makes the index answer any scope alike.
    constraints.push({ key, values: CASE_FOLDED_KEYS.has(key) ? values.map(foldCase) : values });
  }
  if (visibleOnly) constraints.push({ key: 'visible', values: ['true'] });
  return constraints;
}

/**
 * A new total is counted over the smallest side when it holds at most 1/32 of the portfolios
 * (as many rows as a bitset has words), and otherwise by intersecting bitsets.
 */
const SMALL_SIDE_SHARE = 1 / 32;

export interface IndexOptions {
  /** For tests: SMALL_SIDE_SHARE (0: always bitsets; Infinity: always the smallest side). */
  smallSideShare?: number;
  /** For tests: the size from which a word's set of portfolios becomes a bitset. */
  wordBitsFrom?: number;
  /** For tests: the search index is never built (searches test the portfolios' text). */
  searchNeverBuilt?: boolean;
}

/** Facet counts of filters and searches kept at a time (each is a few maps of values). */
const MAX_TALLIES = 64;

/** A filter's or search's facet counts kept up to date on writes, as a Count is. */
interface KeptTally {
  tally: FacetTally;
  test: RecordTest;
  terms: readonly string[] | null;
}

/** A total kept up to date on writes: the test a changed portfolio is counted by. */
interface Count {
  total: number;
  test: RecordTest;
  terms: readonly string[] | null;
}

/**
 * Answers list queries at a cost that does not grow with the collection:
 * - a row per portfolio with its sort values, made when first needed and again on each change;
 * - partitions per value of each exact-match key in use (and one of all portfolios), each with a
 *   B+ tree per orderBy in use, all kept up to date on writes (`store.onChange`);
 * - a page walks, from the cursor, the trees of the condition with the fewest portfolios (a union
 *   of partitions when one key ORs values), testing the other conditions on each row;
 * - a total is the partitions' sizes when one condition is all there is, and otherwise a count
 *   made once by walking the smallest side and then kept up to date on writes;
 * - a search (`q`) is one more condition: its matches, sorted outright when they are few.
 * Trees and partitions are built on first use, so a start does not pay for them.
 */
export class PortfolioIndex {
  private readonly rows: Rows;
  private allPartition: Partition | null = null;
  private readonly partitions = new Map<PartitionKey, Map<string, Partition>>();
  private readonly orders = new Lru<OrderSpec>(MAX_ORDERS, (key) => this.forgetOrder(key));
  private readonly counts = new Lru<Count>(MAX_COUNTS);
  private readonly search: PortfolioSearch;
  private readonly slots = new Slots();
  /** Every value's count of the facet keys, made on first use and then kept up to date. */
  private tally: FacetTally | null = null;
  /** The same of recent filters and searches: counted once, then kept up to date on writes. */
  private readonly tallies = new Lru<KeptTally>(MAX_TALLIES);
  /** Bumped on every change to a portfolio; an answer built at one version is current until then. */
  private changes = 0;

  constructor(
    private readonly records: ReadonlyMap<string, PortfolioRecord>,
    store: Store,
    private readonly options: IndexOptions = {},
  ) {
    this.search = new PortfolioSearch(
      records,
      this.slots,
      options.wordBitsFrom,
      options.searchNeverBuilt,
    );
    this.rows = new Rows(records, this.slots);
    store.onChange((col, _key, prev, next) => {
      if (col === 'portfolios')
        this.onChange(prev as PortfolioRecord | undefined, next as PortfolioRecord | undefined);
    });
  }

  /** Builds the search index in steps in the background (not needed for plain lists). */
  startSearchIndex(): void {
    this.search.buildInBackground();
  }

  get version(): number {
    return this.changes;
  }

  /** Every portfolio, as a partition: its trees are the unfiltered lists. */
  private get all(): Partition {
    if (this.allPartition === null) {
      this.allPartition = new Partition();
      for (const id of this.records.keys()) this.allPartition.ids.add(id);
    }
    return this.allPartition;
  }

  private onChange(prev: PortfolioRecord | undefined, next: PortfolioRecord | undefined): void {
    this.changes++;
    this.tally?.change(prev, next);
    let nextWords: Set<string> | undefined;
    const wordsOfNext = () => (nextWords ??= wordsOf(next!));
    let prevWords: Set<string> | undefined;
    const wordsOfPrev = () => (prevWords ??= wordsOf(prev!));
    if (this.counts.size > 0 || this.tallies.size > 0) {
      const prevMatches = termMatcher(wordsOfPrev);
      const nextMatches = termMatcher(wordsOfNext);
      for (const count of this.counts.values()) {
        if (prev && counts(count, prev, prevMatches)) count.total--;
        if (next && counts(count, next, nextMatches)) count.total++;
      }
      for (const kept of this.tallies.values()) {
        if (prev && counts(kept, prev, prevMatches)) kept.tally.add(prev, -1);
        if (next && counts(kept, next, nextMatches)) kept.tally.add(next, 1);
      }
    }
    this.search.onChange(prev, next, wordsOfPrev, wordsOfNext);
    const id = (prev ?? next)!.portfolioId;
    const slot = this.slots.of(id);
    const before = this.rows.cached(id);
    const after = this.rows.replace(id, next);
    if (prev && before && after) {
      // Stays (no row before: no tree holds the portfolio yet, adding is all there is to do).
      const unmoved = this.unmovedOrders(before, after);
      this.allPartition?.change(before, after, unmoved);
      for (const [key, byValue] of this.partitions) {
        const kept = valuesOf(prev, key);
        const values = valuesOf(after.record, key);
        for (const value of kept) {
          const partition = byValue.get(value);
          if (values.includes(value)) {
            if (partition) partition.change(before, after, unmoved);
            else partitionFor(byValue, value).add(after);
          } else {
            partition?.remove(id, slot, before);
            if (partition?.ids.size === 0) byValue.delete(value);
          }
        }
        for (const value of values)
          if (!kept.includes(value)) partitionFor(byValue, value).add(after);
      }
    } else {
      if (prev) this.allPartition?.remove(id, slot, before);
      if (after) this.allPartition?.add(after);
      for (const [key, byValue] of this.partitions) {
        if (prev)
          for (const value of valuesOf(prev, key)) {
            const partition = byValue.get(value);
            partition?.remove(id, slot, before);
            if (partition?.ids.size === 0) byValue.delete(value);
          }
        if (after)
          for (const value of valuesOf(after.record, key)) partitionFor(byValue, value).add(after);
      }
    }
    // Every bitset has cleared the slot by now (search sets, partitions): it may be given again.
    if (!next) this.slots.release(id);
  }

  /** The orders in use in which a changed portfolio's row stays where it was. */
  private unmovedOrders(before: Row, after: Row): Set<string> {
    const unmoved = new Set<string>();
    for (const [orderKey, spec] of this.orders)
      if (spec.compare(before, after) === 0) unmoved.add(orderKey);
    return unmoved;
  }

  /**
   * Each value's count of `keys` among the matches. Without a filter or search these are the
   * counts kept up to date on every write; otherwise the matches are counted once, walking the
   * side of the condition with the fewest portfolios (as a list's total is counted), and those
   * counts are then kept up to date on every write while the filter is among the recent ones.
   */
  facets(request: FacetRequest): FacetCounts {
    if (request.filter.size === 0 && request.search === null) {
      this.tally ??= FacetTally.of(this.records.values());
      return this.tally.counts(request.keys, request.visibleOnly);
    }
    const key = `${request.visibleOnly ? 'v' : 's'}|${request.filterKey}|${request.searchKey}`;
    const kept = this.tallies.use(key);
    if (kept) return kept.tally.counts(request.keys, false);
    const constraints = constraintsOf(request.filter, request.visibleOnly);
    const test = recordTest(constraints, residualTest(request.filter));
    const matches = request.search ? this.search.matches(request.search, request.searchKey) : null;
    const smallest = constraints
      .map((constraint) => this.side(constraint))
      .reduce<Side | null>(
        (best, side) => (best === null || side.size < best.size ? side : best),
        null,
      );
    const tally = new FacetTally();
    const visit = (id: string) => {
      const record = this.records.get(id);
      if (record === undefined || !test(record)) return;
      if (matches && !matches.has(this.slots.of(id))) return;
      tally.add(record, 1);
    };
    if (smallest) for (const id of smallest.ids()) visit(id);
    else if (matches) for (const slot of matches.slots()) visit(this.slots.idAt(slot)!);
    else for (const id of this.records.keys()) visit(id);
    this.tallies.put(key, { tally, test, terms: request.search });
    return tally.counts(request.keys, false);
  }

  query(request: ListRequest): ListPage {
    const constraints = constraintsOf(request.filter, request.visibleOnly);
    const residual = residualTest(request.filter);
    const test = recordTest(constraints, residual);
    const matches = request.search ? this.search.matches(request.search, request.searchKey) : null;
    const countKey = `${request.visibleOnly ? 'v' : 's'}|${request.filterKey}|${request.searchKey}`;
    const rows = this.rows;

    const sides = constraints.map((constraint) => this.side(constraint));
    const smallest = sides.reduce<Side | null>(
      (best, side) => (best === null || side.size < best.size ? side : best),
      null,
    );
    if (smallest?.size === 0 || matches?.size === 0) return { items: [], total: 0, next: null };
    const rowTest = matches
      ? (row: Row) => matches.has(row.slot) && test(row.record)
      : (row: Row) => test(row.record);

    if (request.order[0]?.key === RELEVANCE) {
      const total =
        this.exactTotal(constraints, residual, matches, smallest) ??
        this.total(countKey, request, test, constraints, residual, smallest, matches, rowTest);
      return { ...this.relevancePage(request, rowTest), total };
    }
    const spec = this.orderSpec(request);
    const driverSize = smallest?.size ?? rows.size;
    // Few matches: sort them outright rather than walk a tree past the many that do not match.
    if (
      matches &&
      matches.size < driverSize &&
      sortIsCheaper(matches.size, driverSize, request.limit)
    ) {
      return this.pageOfSorted(request, spec, matches, rowTest);
    }
    const trees = smallest
      ? smallest.partitions.map((partition) => this.treeOf(smallest.key, partition, spec))
      : [this.all.tree(spec, rows)];
    // The rows of the smallest side's trees meet its own condition: test only the others.
    const others = recordTest(
      constraints.filter((_, at) => sides[at] !== smallest),
      residual,
    );
    const walkTest = matches
      ? (row: Row) => matches.has(row.slot) && others(row.record)
      : (row: Row) => others(row.record);
    const page = this.walk(request, spec, trees, walkTest);
    const total =
      this.exactTotal(constraints, residual, matches, smallest) ??
      this.total(countKey, request, test, constraints, residual, smallest, matches, rowTest);
    return { ...page, total };
  }

  /** The total when one condition is all there is: a size, nothing to count. */
  private exactTotal(
    constraints: readonly Constraint[],
    residual: RecordTest | null,
    matches: Bits | null,
    smallest: Side | null,
  ): number | null {
    if (residual) return null;
    if (matches) return constraints.length === 0 ? matches.size : null;
    if (constraints.length === 0) return this.rows.size;
    return constraints.length === 1 ? smallest!.exactSize : null;
  }

  private walk(
    request: ListRequest,
    spec: OrderSpec,
    trees: RowTree[],
    test: (row: Row) => boolean,
  ) {
    const after = request.after ? probeOf(request.after, spec.order) : null;
    const items: PortfolioRecord[] = [];
    const limit = request.limit;
    let last: Row | null = null;
    let next: Cursor | null = null;
    visitRowsAfter(trees, spec.compare, after, (row) => {
      if (!test(row)) return true;
      if (items.length === limit) {
        next = cursorOf(last!, spec.order);
        return false;
      }
      items.push(row.record);
      last = row;
      return true;
    });
    return { items, next };
  }

  private pageOfSorted(
    request: ListRequest,
    spec: OrderSpec,
    matches: Bits,
    test: (row: Row) => boolean,
  ): ListPage {
    const matching: Row[] = [];
    for (const slot of matches.slots()) {
      const row = this.rows.get(this.slots.idAt(slot)!);
      if (row && test(row)) matching.push(row);
    }
    matching.sort(spec.compare);
    let start = 0;
    if (request.after) {
      const after = probeOf(request.after, spec.order);
      start = firstAfter(matching.length, (at) => spec.compare(matching[at]!, after) <= 0);
    }
    const end = Math.min(start + request.limit, matching.length);
    const page = matching.slice(start, end);
    return {
      items: page.map((row) => row.record),
      total: matching.length,
      next: end < matching.length ? cursorOf(page.at(-1)!, spec.order) : null,
    };
  }

  /** Best match first, ties by portfolioId; the cursor is [score] and the id. */
  private relevancePage(request: ListRequest, test: (row: Row) => boolean) {
    const ranked = this.search.rank(request.search!, request.searchKey);
    let start = 0;
    if (request.after) {
      const score = request.after.values[0] as number;
      const id = request.after.id;
      start = firstAfter(ranked.length, (at) => {
        const entry = ranked[at]!;
        return entry.score > score || (entry.score === score && entry.id <= id);
      });
    }
    const items: PortfolioRecord[] = [];
    let last: { id: string; score: number } | null = null;
    for (let at = start; at < ranked.length; at++) {
      const entry = ranked[at]!;
      const row = this.rows.get(entry.id);
      if (!row || !test(row)) continue;
      if (items.length === request.limit)
        return { items, next: { values: [last!.score], id: last!.id } };
      items.push(row.record);
      last = entry;
    }
    return { items, next: null };
  }

  /**
   * The total of a combination no single partition answers: counted once, then kept up to date on
   * every write (see onChange). Counted over the smallest side when it is small; otherwise as the
   * intersection of the conditions' bitsets (32 portfolios a step), never by walking the matches.
   */
  private total(
    key: string,
    request: ListRequest,
    test: RecordTest,
    constraints: readonly Constraint[],
    residual: RecordTest | null,
    smallest: Side | null,
    matches: Bits | null,
    rowTest: (row: Row) => boolean,
  ): number {
    const cached = this.counts.use(key);
    if (cached) return cached.total;
    let total = 0;
    const rows = this.rows;
    const countIds = (ids: Iterable<string>) => {
      for (const id of ids) {
        const row = rows.get(id);
        if (row && rowTest(row)) total++;
      }
    };
    const share = this.options.smallSideShare ?? SMALL_SIDE_SHARE;
    const smallSide = smallest !== null && smallest.size <= this.slots.capacity * share;
    if (residual === null && !smallSide && (matches !== null || constraints.length > 0)) {
      const sets = constraints.map((constraint) => this.side(constraint).bits(this.slots));
      if (matches) sets.push(matches);
      const [first, ...others] = sets;
      if (others.length === 0) total = first!.size;
      else if (others.length === 1) total = first!.countAnd(others[0]!);
      else total = first!.and(...others).size;
    } else if (smallest) countIds(smallest.ids());
    else if (matches) for (const slot of matches.slots()) countIds([this.slots.idAt(slot)!]);
    else countIds(rows.ids());
    this.counts.put(key, { total, test, terms: request.search });
    return total;
  }

  private side(constraint: Constraint): Side {
    const byValue = this.partitionsOf(constraint.key);
    const partitions = constraint.values
      .map((value) => byValue.get(value))
      .filter((partition) => partition !== undefined);
    return new Side(constraint.key, partitions, ARRAY_KEYS.has(constraint.key));
  }

  /**
   * A partition's tree in one order. Once the tree of all portfolios in that order exists, the
   * first one a key needs is made together with those of every other value of that key: one
   * pass over that tree hands each row to its partitions already sorted (no sort per partition).
   * Before, the partition sorts just its own rows: a first filtered list after a start must not
   * pay for ordering every portfolio.
   */
  private treeOf(key: PartitionKey, partition: Partition, spec: OrderSpec): RowTree {
    if (!partition.hasTree(spec.key) && this.all.hasTree(spec.key)) {
      const byValue = this.partitionsOf(key);
      const sorted = new Map<Partition, Row[]>();
      for (const each of byValue.values()) if (!each.hasTree(spec.key)) sorted.set(each, []);
      for (const row of this.all.tree(spec, this.rows).keys())
        for (const value of valuesOf(row.record, key)) {
          const rows = sorted.get(byValue.get(value)!);
          // An array may name a value twice: the row goes in once.
          if (rows !== undefined && rows.at(-1) !== row) rows.push(row);
        }
      for (const [each, rows] of sorted) each.setTree(spec.key, buildSortedTree(rows, spec));
    }
    return partition.tree(spec, this.rows);
  }

  private partitionsOf(key: PartitionKey): Map<string, Partition> {
    let byValue = this.partitions.get(key);
    if (byValue === undefined) {
      byValue = new Map();
      // Ids only: rows are made when a tree needs them.
      for (const record of this.records.values())
        for (const value of valuesOf(record, key))
          partitionFor(byValue, value).ids.add(record.portfolioId);
      this.partitions.set(key, byValue);
    }
    return byValue;
  }

  private orderSpec(request: ListRequest): OrderSpec {
    let spec = this.orders.use(request.orderKey);
    if (spec === undefined) {
      spec = { key: request.orderKey, order: request.order, compare: rowComparator(request.order) };
      this.orders.put(request.orderKey, spec);
    }
    return spec;
  }

  private forgetOrder(orderKey: string): void {
    this.all.forget(orderKey);
    for (const byValue of this.partitions.values())
      for (const partition of byValue.values()) partition.forget(orderKey);
  }
}

/** The portfolios one condition allows: a union of partitions. */
class Side {
  readonly size: number;

  constructor(
    readonly key: PartitionKey,
    readonly partitions: Partition[],
    /** An array key: a portfolio may be in several of the partitions. */
    private readonly overlapping: boolean,
  ) {
    // For overlapping partitions the sum is an upper bound: good enough to pick the smaller side.
    this.size = partitions.reduce((sum, partition) => sum + partition.ids.size, 0);
  }

  *ids(): Generator<string> {
    if (this.partitions.length === 1 || !this.overlapping) {
      for (const partition of this.partitions) yield* partition.ids;
      return;
    }
    const seen = new Set<string>();
    for (const partition of this.partitions)
      for (const id of partition.ids) {
        if (seen.has(id)) continue;
        seen.add(id);
        yield id;
      }
  }

  /** Its portfolios as a bitset: the partition's own, or a union made for the caller. */
  bits(slots: Slots): Bits {
    if (this.partitions.length === 0) return new Bits();
    const [first, ...others] = this.partitions;
    if (others.length === 0) return first!.bits(slots);
    const union = Bits.ofCapacity(slots.capacity).orInPlace(first!.bits(slots));
    for (const partition of others) union.orInPlace(partition.bits(slots));
    return union;
  }

  /** Exact when the partitions cannot overlap. */
  get exactSize(): number | null {
    return this.partitions.length <= 1 || !this.overlapping ? this.size : null;
  }
}

function partitionFor(byValue: Map<string, Partition>, value: string): Partition {
  let partition = byValue.get(value);
  if (partition === undefined) byValue.set(value, (partition = new Partition()));
  return partition;
}

function counts(
  count: Pick<Count, 'test' | 'terms'>,
  record: PortfolioRecord,
  matches: (term: string) => boolean,
): boolean {
  return count.test(record) && (count.terms === null || count.terms.every(matches));
}

/** Sorting m matches against walking a tree of n rows, of which m/n match, to fill a page. */
function sortIsCheaper(matches: number, rows: number, limit: number): boolean {
  return matches * Math.log2(matches + 1) < (limit * rows) / matches;
}

/** The first index in [0, length) for which `before` is false, `before` being monotone. */
function firstAfter(length: number, before: (at: number) => boolean): number {
  let low = 0;
  let high = length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (before(middle)) low = middle + 1;
    else high = middle;
  }
  return low;
}
