import type {
  PageQuery,
  PortfolioDetail,
  PortfolioUpdated,
  RevisionList,
  TrashList,
} from '../../../shared';
import { apiRequest } from './api-client';
import { portfolioPath } from './portfolio-api';

/** A restore answers like PUT; the new revision is part of that shape. */
export type RestoredPortfolio = PortfolioUpdated;

const TRASH = '/api/v1/trash';
const encode = encodeURIComponent;

function revisionPath(portfolioId: string, revision: number): string {
  return `${portfolioPath(portfolioId)}/revisions/${revision}`;
}

export function listRevisions(
  portfolioId: string,
  params: PageQuery,
  signal?: AbortSignal,
): Promise<RevisionList> {
  return apiRequest<RevisionList>('GET', `${portfolioPath(portfolioId)}/revisions`, {
    query: { ...params },
    signal,
  });
}

/** The portfolio as it was at `revision` (file metadata only, never bytes). */
export function getRevision(
  portfolioId: string,
  revision: number,
  signal?: AbortSignal,
): Promise<PortfolioDetail> {
  return apiRequest<PortfolioDetail>('GET', revisionPath(portfolioId, revision), { signal });
}

/**
 * Makes a new revision with the content of `revision`, only if the portfolio is still at
 * `currentRevision` (what the user was looking at): otherwise 409 and nothing changes.
 */
export function restoreRevision(
  portfolioId: string,
  revision: number,
  currentRevision: number,
): Promise<RestoredPortfolio> {
  return apiRequest<RestoredPortfolio>('POST', `${revisionPath(portfolioId, revision)}/restore`, {
    body: { revision: currentRevision },
  });
}

/** Moves the portfolio to the trash if it is still at `revision` (409 otherwise). */
export function deletePortfolio(portfolioId: string, revision: number): Promise<void> {
  return apiRequest<void>('DELETE', portfolioPath(portfolioId), {
    headers: { 'If-Match': `"${revision}"` },
  });
}

export function listTrash(params: PageQuery, signal?: AbortSignal): Promise<TrashList> {
  return apiRequest<TrashList>('GET', TRASH, { query: { ...params }, signal });
}

/** Brings a trashed portfolio back, at a new revision. */
export function restoreFromTrash(portfolioId: string): Promise<PortfolioDetail> {
  return apiRequest<PortfolioDetail>('POST', `${TRASH}/${encode(portfolioId)}/restore`);
}

/** Admins only: removes a trashed portfolio for good (its history and unreferenced files too). */
export function purgeFromTrash(portfolioId: string): Promise<void> {
  return apiRequest<void>('DELETE', `${TRASH}/${encode(portfolioId)}`);
}
