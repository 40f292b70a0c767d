import { useQuery } from '@tanstack/react-query';
import { getPortfolio } from '../api/portfolio-api';
import { queryKeys } from '../api/query-keys';

export function usePortfolio(portfolioId: string) {
  return useQuery({
    queryKey: queryKeys.portfolio(portfolioId),
    queryFn: ({ signal }) => getPortfolio(portfolioId, signal),
  });
}
