import type { CreatedShare, CreateShareBody, Share } from '../../../shared';
import { api, done, ok } from './api-client';

export type { CreatedShare, Share };

const onPortfolio = (portfolioId: string) => ({ path: { portfolioId } });

export async function listShares(portfolioId: string, signal?: AbortSignal): Promise<Share[]> {
  const answer = await ok(
    api.GET('/api/v1/portfolio/{portfolioId}/shares', {
      params: onPortfolio(portfolioId),
      signal,
    }),
  );
  return answer.shares;
}

export function createShare(portfolioId: string, body: CreateShareBody): Promise<CreatedShare> {
  return ok(
    api.POST('/api/v1/portfolio/{portfolioId}/shares', { params: onPortfolio(portfolioId), body }),
  );
}

export function revokeShare(portfolioId: string, shareId: string): Promise<void> {
  return done(
    api.DELETE('/api/v1/portfolio/{portfolioId}/shares/{shareId}', {
      params: { path: { portfolioId, shareId } },
    }),
  );
}

/** The whole link to hand out: the server answers only its path. */
export const shareLink = (url: string): string =>
  new URL(url, globalThis.location?.origin ?? 'http://localhost').toString();
