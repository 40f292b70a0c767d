import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PortfolioRecord } from '../../shared';
import {
  buildTree,
  emptyTree,
  probeOf,
  rowComparator,
  visitRowsAfter,
  type OrderSpec,
  type Row,
  type RowTree,
} from '../../server/storage/embedded/sorted-rows';

/*
 * visitRowsAfter walks the trees' nodes itself; here against a sorted array, on trees of one
 * leaf up to three levels (32 rows a node), built at once or by inserts and deletes (which leave
 * nodes of other sizes), from every kind of position.
 */

const spec: OrderSpec = {
  key: 'createdTime-',
  order: [{ key: 'createdTime', descending: true }],
  compare: rowComparator([{ key: 'createdTime', descending: true }]),
};

/** A row with only what the order reads; ids make ties predictable. */
const rowOf = (id: number, createdTime: number) =>
  ({
    id: `p${String(id).padStart(5, '0')}`,
    slot: id,
    record: {} as PortfolioRecord,
    createdTime,
  }) as unknown as Row;

function visited(trees: RowTree[], after: Row | null, stopAfter = Infinity): Row[] {
  const rows: Row[] = [];
  visitRowsAfter(trees, spec.compare, after, (row) => {
    rows.push(row);
    return rows.length < stopAfter;
  });
  return rows;
}

const treeOf = (rows: Row[], byInserts: boolean, deleted: ReadonlySet<number>) => {
  if (!byInserts) return buildTree([...rows], spec);
  const tree = emptyTree(spec);
  for (const row of rows) tree.set(row, undefined);
  for (const row of rows) if (deleted.has(row.slot)) tree.delete(row);
  return tree;
};

const scenario = fc.record({
  size: fc.oneof(fc.nat(40), fc.nat(3000)),
  trees: fc.integer({ min: 1, max: 3 }),
  byInserts: fc.boolean(),
  // Few distinct times: ties, broken by id.
  times: fc.integer({ min: 1, max: 50 }),
  seed: fc.nat(),
  // Where the walk starts: nowhere, at a row, or between rows (a row since deleted).
  from: fc.constantFrom('start', 'row', 'gap'),
  at: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
  stopAfter: fc.oneof(fc.constant(Infinity), fc.integer({ min: 1, max: 100 })),
});

describe('visitRowsAfter', () => {
  it('hands over the rows strictly after the position, in order, each once', () => {
    fc.assert(
      fc.property(scenario, (given) => {
        let state = given.seed;
        const next = () => (state = (state * 1103515245 + 12345) >>> 0) / 2 ** 32;
        const all = Array.from({ length: given.size }, (_, id) =>
          rowOf(id, Math.floor(next() * given.times)),
        );
        const deleted = new Set(all.filter(() => next() < 0.2).map((row) => row.slot));
        // Each tree holds some rows; a row may be in several (as with an array field's values).
        const members = Array.from({ length: given.trees }, () =>
          all.filter(() => given.trees === 1 || next() < 0.6),
        );
        const trees = members.map((rows) => treeOf(rows, given.byInserts, deleted));
        const kept = (row: Row) => !given.byInserts || !deleted.has(row.slot);
        const expected = [...new Set(members.flat())].filter(kept).sort(spec.compare);

        let after: Row | null = null;
        if (given.from !== 'start' && all.length > 0) {
          const chosen = all[Math.floor(given.at * all.length)]!;
          // A probe made from a page token, as the index seeks with: not the tree's own object.
          after = probeOf({ values: [chosen.createdTime], id: chosen.id }, spec.order);
          if (given.from === 'gap') for (const tree of trees) tree.delete(chosen);
        }
        const afterAfter = expected.filter((row) => after === null || spec.compare(row, after) > 0);
        const rows = visited(trees, after, given.stopAfter);
        expect(rows).toEqual(afterAfter.slice(0, given.stopAfter));
      }),
      { numRuns: 300 },
    );
  });

  it('hands over nothing from an empty tree or past the last row', () => {
    expect(visited([emptyTree(spec)], null)).toEqual([]);
    const rows = Array.from({ length: 100 }, (_, id) => rowOf(id, id));
    const tree = buildTree([...rows], spec);
    expect(visited([tree], rows[0]!)).toEqual([]);
    expect(visited([tree, emptyTree(spec)], rows[1]!)).toEqual([rows[0]]);
  });
});
