/**
 * The facets use case's pure part (DESIGN §16): which keys a request counts, and the answer made
 * from a backend's counts: values of a case-folded key merged whatever their case, empty values
 * and values without a match left out, the most used first, then by value.
 */
import {
  CASE_FOLDED_KEYS,
  FACET_KEYS,
  foldCase,
  type FacetKey,
  type FacetValue,
} from '../../shared';
import { ApiError } from '../errors';

/** A backend's counts: per key asked for, each stored spelling of a value and its matches. */
export type FacetCounts = Partial<Record<FacetKey, ReadonlyMap<string, number>>>;

/** `category,generalTag` → the keys, in the table's order; not given or empty: every key. */
export function parseFacetKeys(raw: string | undefined): FacetKey[] {
  if (raw === undefined || raw.trim() === '') return [...FACET_KEYS];
  const asked = new Set<string>();
  for (const item of raw.split(',')) {
    const key = item.trim();
    if (!(FACET_KEYS as readonly string[]).includes(key)) {
      const message =
        key === ''
          ? `keys has an empty key; the keys that can be counted are ${FACET_KEYS.join(', ')}.`
          : `"${key}" cannot be counted; the keys that can be counted are ${FACET_KEYS.join(', ')}.`;
      throw new ApiError('INVALID_QUERY', message, [{ field: 'querystring.keys', message }]);
    }
    asked.add(key);
  }
  return FACET_KEYS.filter((key) => asked.has(key));
}

/** JavaScript's string order (code units), the same whichever backend counted. */
const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Most matches first, then the value. */
const facetOrder = (a: FacetValue, b: FacetValue) =>
  b.count - a.count || byCodeUnits(a.value, b.value);

/**
 * One key's values. Spellings of a case-folded value are summed (a portfolio has one category,
 * so they never overlap) and shown as the most used spelling (the first in code-unit order on a
 * tie), so every backend shows the same.
 */
export function facetValues(key: FacetKey, counts: ReadonlyMap<string, number>): FacetValue[] {
  const present = [...counts].filter(([value, count]) => value !== '' && count > 0);
  if (!CASE_FOLDED_KEYS.has(key))
    return present.map(([value, count]) => ({ value, count })).sort(facetOrder);
  const groups = new Map<string, { spelling: FacetValue; count: number }>();
  for (const [value, count] of present) {
    const folded = foldCase(value);
    const group = groups.get(folded);
    if (group === undefined) groups.set(folded, { spelling: { value, count }, count });
    else {
      group.count += count;
      if (facetOrder({ value, count }, group.spelling) < 0) group.spelling = { value, count };
    }
  }
  return [...groups.values()]
    .map((group) => ({ value: group.spelling.value, count: group.count }))
    .sort(facetOrder);
}

export function facetAnswer(
  keys: readonly FacetKey[],
  counts: FacetCounts,
): Record<string, FacetValue[]> {
  return Object.fromEntries(keys.map((key) => [key, facetValues(key, counts[key] ?? new Map())]));
}
