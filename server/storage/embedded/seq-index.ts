import * as sortedBtree from 'sorted-btree';
import type { CollectionName, Store } from './store';

type BTreeClass = typeof sortedBtree.default;
// sorted-btree is CommonJS with `exports.default`: Node's ESM loader wraps it one level deeper
// than a bundler does, so take the class from whichever level holds it.
const BTree: BTreeClass =
  (sortedBtree.default as unknown as { default?: BTreeClass }).default ?? sortedBtree.default;

/** Turns a stored value of one collection into what the index keeps for it. */
export type SeqSource<V> = (key: string, value: never) => V;

interface Sequenced {
  seq?: unknown;
}

/**
 * Values of one or more collections ordered by their `seq`, derived from the store: built when
 * opened and kept in step through `store.onChange` (rollbacks included, since they arrive there
 * too). A key appears at most once across the sources, at its latest seq, so the index is the
 * collapsed change feed when the sources are a portfolio's places (live, trash, tombstones).
 */
export class SeqIndex<V> {
  private readonly bySeq = new BTree<number, { key: string; value: V }>();

  constructor(store: Store, sources: Partial<Record<CollectionName, SeqSource<V>>>) {
    for (const [name, source] of Object.entries(sources) as [CollectionName, SeqSource<V>][]) {
      for (const [key, value] of store.collection<Sequenced>(name)) this.add(key, value, source);
    }
    store.onChange((col, key, prev, next) => {
      const source = sources[col];
      if (!source) return;
      if (prev) this.remove(key, prev as Sequenced);
      if (next) this.add(key, next as Sequenced, source);
    });
  }

  private add(key: string, value: Sequenced, source: SeqSource<V>): void {
    // Records written before seq existed have none; the migration gives every record one.
    if (typeof value.seq !== 'number') return;
    this.bySeq.set(value.seq, { key, value: source(key, value as never) });
  }

  private remove(key: string, value: Sequenced): void {
    if (typeof value.seq !== 'number') return;
    if (this.bySeq.get(value.seq)?.key === key) this.bySeq.delete(value.seq);
  }

  get size(): number {
    return this.bySeq.size;
  }

  /** Ascending from the first seq after `seq`. */
  *after(seq: number): Generator<[number, V]> {
    for (const [at, entry] of this.bySeq.entries(seq + 1)) yield [at, entry.value];
  }

  /** Descending from the last seq before `seq` (from the newest when undefined). */
  *before(seq: number | undefined): Generator<[number, V]> {
    const entries =
      seq === undefined
        ? this.bySeq.entriesReversed()
        : this.bySeq.entriesReversed(seq, undefined, true);
    for (const [at, entry] of entries) yield [at, entry.value];
  }
}
