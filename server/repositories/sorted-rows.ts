import type BTreeClass from 'sorted-btree';
import type { OrderKey, PortfolioRecord } from '../../shared';
import type { Cursor, OrderTerm, SortValue } from '../domain/list-query';
import { lazyRequire } from '../lazy-require';

type BTree<K> = BTreeClass<K, undefined>;
/** A node of a tree: its keys and, in a leaf, its values (see leavesWithoutValues). */
interface TreeNode {
  keys: unknown[];
  values: unknown[];
  children?: TreeNode[];
}
const loadBTree = lazyRequire<{
  default: typeof BTreeClass;
  BNode: new () => TreeNode;
}>('sorted-btree');
const loadBulk = lazyRequire<{
  bulkLoad: <K>(
    keys: K[],
    values: undefined[],
    maxNodeSize: number,
    compare: Compare<K>,
  ) => BTree<K>;
}>('sorted-btree/extended/bulkLoad');

/** Node size of the trees: sorted-btree's default, a good balance of depth and splice cost. */
const NODE_SIZE = 32;

/**
 * A portfolio with its sort values worked out once per change, shared by every tree that holds
 * it. Text sorts case-insensitively; the raw text after a NUL makes the order total and
 * deterministic (a keyset cursor needs that), and one string comparison does both.
 */
export interface Row extends Readonly<Record<OrderKey, SortValue>> {
  readonly id: string;
  /** The portfolio's slot in bitsets (see Slots). */
  readonly slot: number;
  readonly record: PortfolioRecord;
}

const textKey = (text: string) => `${text.toLowerCase()}\u0000${text}`;
/**
 * The keys of the few categories, made once: a key per row took 3.5 MB at 100k portfolios for
 * ten distinct values. Bounded, since a category is free text: past the bound, keys are made.
 */
const categoryKeys = new Map<string, string>();
const MAX_CATEGORY_KEYS = 1024;
function categoryKey(category: string): string {
  let key = categoryKeys.get(category);
  if (key === undefined) {
    key = textKey(category);
    if (categoryKeys.size < MAX_CATEGORY_KEYS) categoryKeys.set(category, key);
  }
  return key;
}

export function rowOf(record: PortfolioRecord, slot: number): Row {
  return {
    id: record.portfolioId,
    slot,
    record,
    createdTime: record.createdTime,
    modifiedTime: record.modifiedTime,
    staffPick: record.staffPick ? 1 : 0,
    projectTitle: textKey(record.projectTitle),
    category: categoryKey(record.category),
  };
}

export type Compare<K> = (a: K, b: K) => number;

/** Rows in the order of `order`; ties by portfolioId ascending, whatever the directions. */
export function rowComparator(order: readonly OrderTerm[]): Compare<Row> {
  const keys = order.map((term) => term.key as OrderKey);
  const directions = order.map((term) => (term.descending ? -1 : 1));
  return (a, b) => {
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index]!;
      const x = a[key];
      const y = b[key];
      if (x !== y) return (x < y ? -1 : 1) * directions[index]!;
    }
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  };
}

/** Where a row stands under `order`: what a page token carries. */
export function cursorOf(row: Row, order: readonly OrderTerm[]): Cursor {
  return { values: order.map((term) => row[term.key as OrderKey]), id: row.id };
}

/** A stand-in row at a cursor's position, to seek a tree with. */
export function probeOf(cursor: Cursor, order: readonly OrderTerm[]): Row {
  const probe: Record<string, unknown> = { id: cursor.id };
  order.forEach((term, index) => (probe[term.key] = cursor.values[index]));
  return probe as unknown as Row;
}

/** One orderBy in use: its canonical text and comparator. */
export interface OrderSpec {
  key: string;
  order: readonly OrderTerm[];
  compare: Compare<Row>;
}

/** A B+ tree of rows (used as a sorted set) kept in one order. */
export type RowTree = BTree<Row>;

export function buildTree(rows: Row[], spec: OrderSpec): RowTree {
  rows.sort(spec.compare);
  return buildSortedTree(rows, spec);
}

/** A tree of rows already in the order of `spec`. */
export function buildSortedTree(rows: Row[], spec: OrderSpec): RowTree {
  if (rows.length === 0) return emptyTree(spec);
  const tree = loadBulk().bulkLoad(
    rows,
    new Array<undefined>(rows.length),
    NODE_SIZE,
    spec.compare,
  );
  leavesWithoutValues(tree);
  return tree;
}

/**
 * Gives a bulk-loaded tree's leaves the one shared array of no values that sorted-btree gives
 * every leaf it makes itself (a set of keys has no values): bulkLoad slices a values array of
 * `undefined` per leaf, as large as its keys, which was half the memory of every tree (10 MB at
 * 100k portfolios with the bench's orders and filters built). sorted-btree makes a leaf's own
 * array again from that shared one when a value other than undefined is set, which never happens
 * here.
 */
function leavesWithoutValues(tree: RowTree): void {
  const none = new (loadBTree().BNode)().values;
  const visit = (node: TreeNode) => {
    if (node.children) for (const child of node.children) visit(child);
    else node.values = none;
  };
  visit((tree as unknown as { _root: TreeNode })._root);
}

export function emptyTree(spec: OrderSpec): RowTree {
  return new (loadBTree().default)<Row, undefined>(undefined, spec.compare, NODE_SIZE);
}

/**
 * The rows of `trees` (each in the same order) strictly after `after`, merged in that order; a
 * row in several trees (an array field holding two of the values asked for) comes once.
 */
export function* rowsAfter(
  trees: readonly RowTree[],
  compare: Compare<Row>,
  after: Row | null,
): Generator<Row> {
  const start = (tree: RowTree) => {
    const keys = after ? tree.keys(after) : tree.keys();
    const head = keys.next();
    // keys(after) starts at `after` itself when that row is still there: skip it.
    if (after && !head.done && compare(head.value, after) === 0) return { keys, head: keys.next() };
    return { keys, head };
  };
  if (trees.length === 1) {
    const { keys, head } = start(trees[0]!);
    if (head.done) return;
    yield head.value;
    yield* keys;
    return;
  }
  const lanes = trees.map(start).filter((lane) => !lane.head.done);
  let last: Row | null = null;
  while (lanes.length > 0) {
    let best = 0;
    for (let index = 1; index < lanes.length; index++)
      if (compare(lanes[index]!.head.value as Row, lanes[best]!.head.value as Row) < 0)
        best = index;
    const lane = lanes[best]!;
    const row = lane.head.value as Row;
    if (row !== last) yield row;
    last = row;
    lane.head = lane.keys.next();
    if (lane.head.done) lanes.splice(best, 1);
  }
}
