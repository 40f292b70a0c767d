import { useInfiniteQuery } from '@tanstack/react-query';
import { listPortfolios } from '../api/portfolio-api';
import { queryKeys } from '../api/query-keys';

export const PAGE_SIZE = 60;

/** Pages of the list endpoint, chained by nextPageToken ("" on the last page). */
export function useGalleryList(params: { orderBy: string; filter?: string; q?: string }) {
  const base = { ...params, pageSize: PAGE_SIZE };
  return useInfiniteQuery({
    queryKey: queryKeys.portfolioList(base),
    queryFn: ({ pageParam, signal }) =>
      listPortfolios(pageParam ? { ...base, pageToken: pageParam } : base, signal),
    initialPageParam: '',
    getNextPageParam: (lastPage) => lastPage.nextPageToken || undefined,
  });
}
