import { type QueryClient, useInfiniteQuery } from '@tanstack/react-query';
import type { PortfolioDetail } from '../../../shared';
import { listTrash, restoreFromTrash } from '../api/history-api';
import { queryKeys } from '../api/query-keys';

export const TRASH_PAGE_SIZE = 50;

export function useTrash(enabled: boolean) {
  return useInfiniteQuery({
    queryKey: queryKeys.trash,
    queryFn: ({ pageParam, signal }) =>
      listTrash({ pageSize: TRASH_PAGE_SIZE, pageToken: pageParam }, signal),
    initialPageParam: '',
    getNextPageParam: (last) => last.nextPageToken || undefined,
    enabled,
  });
}

/**
 * Brings a portfolio back from the trash and refreshes what shows it. A plain function, not a
 * mutation hook: the undo toast runs it after the page that deleted the portfolio is gone.
 */
export async function restoreTrashed(
  queryClient: QueryClient,
  portfolioId: string,
): Promise<PortfolioDetail> {
  const restored = await restoreFromTrash(portfolioId);
  queryClient.setQueryData(queryKeys.portfolio(portfolioId), restored);
  await Promise.all([
    queryClient.invalidateQueries({ queryKey: queryKeys.trash }),
    queryClient.invalidateQueries({ queryKey: queryKeys.portfolios }),
  ]);
  return restored;
}
