import type { ListParams } from './portfolio-api';

/** Every cache key in one place, so invalidations cannot drift from the queries they target. */
export const queryKeys = {
  session: ['session'] as const,
  portfolios: ['portfolios'] as const,
  portfolioList: (params: Omit<ListParams, 'pageToken'>) => ['portfolios', 'list', params] as const,
  portfolio: (portfolioId: string) => ['portfolios', 'detail', portfolioId] as const,
  fileBlob: (portfolioId: string, fileId: string, width: number | 'full') =>
    ['files', portfolioId, fileId, width] as const,
  users: ['users'] as const,
};
