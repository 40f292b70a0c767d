import type BTreeClass from 'sorted-btree';
import type { OrderKey, PortfolioRecord } from '../../../shared';
import type { Cursor, OrderTerm, SortValue } from '../../domain/list-query';
import { lazyRequire } from '../../lazy-require';

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
 * A position in a tree, moved along its leaves' arrays: no iterator object, closure call or
 * generator step per row (sorted-btree's `keys()` made three of those per row, which was most of
 * the cost of walking a page). It reads sorted-btree's nodes (`_root`, each node's `keys` and an
 * internal node's `children`, its keys the largest of each child's): the package is pinned, and
 * test/server/sorted-rows.test.ts checks the walk on trees of up to three levels. The tree must
 * not change while a cursor is in use.
 */
class TreeCursor {
  /** The row at the position; undefined past the last row. */
  row: Row | undefined;
  private leaf: readonly Row[] = [];
  private at = 0;
  /** The internal nodes above the leaf, root first, and the child taken in each. */
  private readonly path: TreeNode[] = [];
  private readonly taken: number[] = [];

  /** At the first row strictly after `after` (or the first row). */
  constructor(tree: RowTree, compare: Compare<Row>, after: Row | null) {
    let node = (tree as unknown as { _root: TreeNode })._root;
    while (node.children !== undefined) {
      // An internal node's key is the largest row of its child.
      const index = after ? firstAbove(node.keys as Row[], after, compare) : 0;
      if (index === node.keys.length) return;
      this.path.push(node);
      this.taken.push(index);
      node = node.children[index]!;
    }
    this.leaf = node.keys as Row[];
    this.at = after ? firstAbove(this.leaf, after, compare) : 0;
    if (this.at < this.leaf.length) this.row = this.leaf[this.at];
    else this.nextLeaf();
  }

  next(): void {
    if (++this.at < this.leaf.length) this.row = this.leaf[this.at];
    else this.nextLeaf();
  }

  private nextLeaf(): void {
    const { path, taken } = this;
    for (let level = path.length - 1; level >= 0; level--) {
      const index = ++taken[level]!;
      const children = path[level]!.children!;
      if (index === children.length) continue;
      let node = children[index]!;
      for (let deeper = level + 1; deeper < path.length; deeper++) {
        path[deeper] = node;
        taken[deeper] = 0;
        node = node.children![0]!;
      }
      this.leaf = node.keys as Row[];
      this.at = 0;
      this.row = this.leaf[0];
      return;
    }
    this.row = undefined;
  }
}

/** The first index of sorted `rows` whose row sorts after `after`; rows.length if none does. */
function firstAbove(rows: readonly Row[], after: Row, compare: Compare<Row>): number {
  let low = 0;
  let high = rows.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compare(rows[middle]!, after) <= 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * Hands `visit` the rows of `trees` (each in the same order) strictly after `after`, merged in
 * that order, until it answers false; a row in several trees (an array field holding two of the
 * values asked for) comes once.
 */
export function visitRowsAfter(
  trees: readonly RowTree[],
  compare: Compare<Row>,
  after: Row | null,
  visit: (row: Row) => boolean,
): void {
  if (trees.length === 1) {
    const cursor = new TreeCursor(trees[0]!, compare, after);
    for (let row = cursor.row; row !== undefined; cursor.next(), row = cursor.row)
      if (!visit(row)) return;
    return;
  }
  const cursors = trees
    .map((tree) => new TreeCursor(tree, compare, after))
    .filter((cursor) => cursor.row !== undefined);
  let last: Row | null = null;
  while (cursors.length > 0) {
    let best = 0;
    for (let index = 1; index < cursors.length; index++)
      if (compare(cursors[index]!.row!, cursors[best]!.row!) < 0) best = index;
    const cursor = cursors[best]!;
    const row = cursor.row!;
    if (row !== last && !visit(row)) return;
    last = row;
    cursor.next();
    if (cursor.row === undefined) cursors.splice(best, 1);
  }
}
