import type {
  PageQuery,
  PortfolioDetail,
  PortfolioUpdated,
  RevisionList,
  TrashList,
} from '../../../shared';
import { api, done, ok } from './api-client';

/** A restore answers like PUT; the new revision is part of that shape. */
export type RestoredPortfolio = PortfolioUpdated;

const onPortfolio = (portfolioId: string) => ({ path: { portfolioId } });
const onRevision = (portfolioId: string, revision: number) => ({
  path: { portfolioId, revision: String(revision) },
});

export function listRevisions(
  portfolioId: string,
  params: PageQuery,
  signal?: AbortSignal,
): Promise<RevisionList> {
  return ok(
    api.GET('/api/v1/portfolio/{portfolioId}/revisions', {
      params: { ...onPortfolio(portfolioId), query: params },
      signal,
    }),
  );
}

/** The portfolio as it was at `revision` (file metadata only, never bytes). */
export function getRevision(
  portfolioId: string,
  revision: number,
  signal?: AbortSignal,
): Promise<PortfolioDetail> {
  return ok(
    api.GET('/api/v1/portfolio/{portfolioId}/revisions/{revision}', {
      params: onRevision(portfolioId, revision),
      signal,
    }),
  );
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
  return ok(
    api.POST('/api/v1/portfolio/{portfolioId}/revisions/{revision}/restore', {
      params: onRevision(portfolioId, revision),
      body: { revision: currentRevision },
    }),
  );
}

/** Moves the portfolio to the trash if it is still at `revision` (409 otherwise). */
export function deletePortfolio(portfolioId: string, revision: number): Promise<void> {
  return done(
    api.DELETE('/api/v1/portfolio/{portfolioId}', {
      params: { ...onPortfolio(portfolioId), header: { 'if-match': `"${revision}"` } },
    }),
  );
}

export function listTrash(params: PageQuery, signal?: AbortSignal): Promise<TrashList> {
  return ok(api.GET('/api/v1/trash', { params: { query: params }, signal }));
}

/** Brings a trashed portfolio back, at a new revision. */
export function restoreFromTrash(portfolioId: string): Promise<PortfolioDetail> {
  return ok(api.POST('/api/v1/trash/{portfolioId}/restore', { params: onPortfolio(portfolioId) }));
}

/** Admins only: removes a trashed portfolio for good (its history and unreferenced files too). */
export function purgeFromTrash(portfolioId: string): Promise<void> {
  return done(api.DELETE('/api/v1/trash/{portfolioId}', { params: onPortfolio(portfolioId) }));
}
