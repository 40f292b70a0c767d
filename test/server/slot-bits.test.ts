import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Bits, Slots } from '../../server/storage/embedded/slot-bits';

/*
 * Bitsets against plain Sets of numbers: random adds and deletes over slots spread across many
 * 32-bit words (and past the length a bitset was made with), then AND, OR and counts.
 */
const slot = fc.integer({ min: 0, max: 200 });
const operations = fc.array(fc.tuple(fc.boolean(), slot), { maxLength: 300 });

function build(steps: Array<[boolean, number]>, capacity: number) {
  const bits = Bits.ofCapacity(capacity);
  const model = new Set<number>();
  for (const [add, at] of steps) {
    if (add) {
      bits.add(at);
      model.add(at);
    } else {
      bits.delete(at);
      model.delete(at);
    }
  }
  return { bits, model };
}

const sorted = (set: Iterable<number>) => [...set].sort((a, b) => a - b);

describe('Bits', () => {
  it('holds, counts and lists the same slots as a Set', () => {
    fc.assert(
      fc.property(operations, fc.integer({ min: 0, max: 100 }), (steps, capacity) => {
        const { bits, model } = build(steps, capacity);
        expect(bits.size).toBe(model.size);
        expect([...bits.slots()]).toEqual(sorted(model));
        for (let at = 0; at <= 210; at++) expect(bits.has(at)).toBe(model.has(at));
      }),
      { numRuns: 300 },
    );
  });

  it('intersects, unites and counts intersections as Sets do', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(operations, fc.integer({ min: 0, max: 100 })), {
          minLength: 1,
          maxLength: 4,
        }),
        (specs) => {
          const sets = specs.map(([steps, capacity]) => build(steps, capacity));
          const [first, ...others] = sets;
          const both = first!.bits.and(...others.map((set) => set.bits));
          const expected = sorted(first!.model).filter((at) =>
            others.every((set) => set.model.has(at)),
          );
          expect([...both.slots()]).toEqual(expected);
          expect(both.size).toBe(expected.length);
          if (others.length > 0)
            expect(first!.bits.countAnd(others[0]!.bits)).toBe(
              sorted(first!.model).filter((at) => others[0]!.model.has(at)).length,
            );
          const union = Bits.ofCapacity(0);
          for (const set of sets) union.orInPlace(set.bits);
          const all = new Set(sets.flatMap((set) => [...set.model]));
          expect([...union.slots()]).toEqual(sorted(all));
          expect(union.size).toBe(all.size);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('Slots', () => {
  it('gives each live id its own slot, and a released slot again', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 40 })), { maxLength: 200 }),
        (steps) => {
          const slots = new Slots();
          const live = new Map<string, number>();
          for (const [take, n] of steps) {
            const id = `p${n}`;
            if (take) {
              const at = slots.of(id);
              if (live.has(id)) expect(at).toBe(live.get(id));
              live.set(id, at);
            } else {
              slots.release(id);
              live.delete(id);
            }
            // Distinct slots for distinct live ids, each naming its id.
            expect(new Set(live.values()).size).toBe(live.size);
            for (const [liveId, at] of live) expect(slots.idAt(at)).toBe(liveId);
            // Released slots are reused: never more slots than ids ever live at once.
            expect(slots.capacity).toBeLessThanOrEqual(41);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
