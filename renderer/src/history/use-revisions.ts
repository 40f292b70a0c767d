import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { getRevision, listRevisions } from '../api/history-api';
import { queryKeys } from '../api/query-keys';

export const HISTORY_PAGE_SIZE = 10;

/**
 * A portfolio's history up to `currentRevision`, newest first, one page more on each
 * `fetchNextPage`. The previous list of the same portfolio stays on screen while a newer one loads.
 */
export function useRevisions(portfolioId: string, currentRevision: number) {
  return useInfiniteQuery({
    queryKey: queryKeys.revisions(portfolioId, currentRevision),
    queryFn: ({ pageParam, signal }) =>
      listRevisions(portfolioId, { pageSize: HISTORY_PAGE_SIZE, pageToken: pageParam }, signal),
    initialPageParam: '',
    getNextPageParam: (last) => last.nextPageToken || undefined,
    placeholderData: (previous, previousQuery) =>
      previousQuery?.queryKey[2] === portfolioId ? previous : undefined,
  });
}

/** One revision as it was: a past revision never changes, so it is fetched once. */
export function useRevision(portfolioId: string, revision: number) {
  return useQuery({
    queryKey: queryKeys.revision(portfolioId, revision),
    queryFn: ({ signal }) => getRevision(portfolioId, revision, signal),
    staleTime: Infinity,
  });
}
