import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { getRevision, listRevisions } from '../api/history-api';
import { queryKeys } from '../api/query-keys';

export const HISTORY_PAGE_SIZE = 10;

/** A portfolio's history, newest first, one page more on each `fetchNextPage`. */
export function useRevisions(portfolioId: string) {
  return useInfiniteQuery({
    queryKey: queryKeys.revisions(portfolioId),
    queryFn: ({ pageParam, signal }) =>
      listRevisions(portfolioId, { pageSize: HISTORY_PAGE_SIZE, pageToken: pageParam }, signal),
    initialPageParam: '',
    getNextPageParam: (last) => last.nextPageToken || undefined,
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
