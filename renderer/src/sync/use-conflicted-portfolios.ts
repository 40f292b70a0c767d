import { useQuery } from '@tanstack/react-query';
import { queryKeys } from '../api/query-keys';
import { listAllConflicts } from '../api/sync-api';

const NONE: ReadonlyMap<string, number> = new Map();

/**
 * How many open conflicts each portfolio has (staff only). Every card asks; one query answers
 * them all. A server without conflicts support simply marks nothing.
 */
export function useConflictedPortfolios(enabled: boolean): ReadonlyMap<string, number> {
  const conflicts = useQuery({
    queryKey: queryKeys.conflicts,
    queryFn: ({ signal }) => listAllConflicts(signal),
    enabled,
    select: (list) => {
      const counts = new Map<string, number>();
      for (const conflict of list)
        counts.set(conflict.portfolioId, (counts.get(conflict.portfolioId) ?? 0) + 1);
      return counts;
    },
    retry: false,
    staleTime: 10_000,
  });
  return conflicts.data ?? NONE;
}
