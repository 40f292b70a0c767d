import { useQuery } from '@tanstack/react-query';
import { FACET_KEYS, type FacetKey } from '../../../shared';
import { getFacets } from '../api/portfolio-api';
import { queryKeys } from '../api/query-keys';

export type PickLists = Partial<Record<FacetKey, readonly string[]>>;

const NONE: PickLists = {};

/**
 * The values already in use of the facet keys (most used first), for the forms' and filters'
 * pick-lists. Until they arrive, or if they cannot be had, the lists are empty: typing a value
 * works the same either way.
 */
export function usePickLists(keys: readonly FacetKey[] = FACET_KEYS): PickLists {
  const joined = keys.join(',');
  const query = useQuery({
    queryKey: queryKeys.facets(joined),
    queryFn: ({ signal }) => getFacets(keys, signal),
    staleTime: 30_000,
    select: (facets): PickLists =>
      Object.fromEntries(
        Object.entries(facets).map(([key, values]) => [key, values.map((entry) => entry.value)]),
      ),
  });
  return query.data ?? NONE;
}
