import { ApiError } from '../errors';
import {
  InvalidCursorError,
  PortfolioIdTakenError,
  PortfolioNotFoundError,
  RepositoryError,
  ResyncRequiredError,
  RevisionConflictError,
} from '../repositories/portfolio-repository-contract';
import { StorageUnavailableError, StorageWriteFailedError } from '../repositories/storage-backend';

/** Where a conditional change named its revision: the body's `revision` or `If-Match`. */
export type RevisionSource = 'body.revision' | 'headers.if-match';

export function revisionConflict(
  current: number,
  expected: number,
  source: RevisionSource = 'headers.if-match',
): ApiError {
  return new ApiError(
    'REVISION_CONFLICT',
    `The portfolio is at revision ${current}, not ${expected}; reload it and try again.`,
    [{ field: source, message: `current revision is ${current}` }],
  );
}

/**
 * The one place where the repository's typed errors (which know nothing of HTTP) become API
 * errors. Anything else, a storage fault included, passes through unchanged to the error handler.
 */
export function apiErrorOf(error: unknown, source?: RevisionSource): unknown {
  if (!(error instanceof RepositoryError)) return error;
  if (error instanceof PortfolioNotFoundError)
    return new ApiError('PORTFOLIO_NOT_FOUND', error.message);
  if (error instanceof PortfolioIdTakenError) {
    return new ApiError('ID_TAKEN', error.message, [
      { field: 'body.portfolioId', message: 'is taken (by a portfolio or one in the trash)' },
    ]);
  }
  if (error instanceof RevisionConflictError)
    return revisionConflict(error.currentRevision, error.expectedRevision, source);
  if (error instanceof ResyncRequiredError) {
    return new ApiError('RESYNC_REQUIRED', error.message, [
      { field: 'querystring.since', message: `changes are known from ${error.oldestKnown} on` },
    ]);
  }
  if (error instanceof StorageUnavailableError) {
    return new ApiError('DATABASE_UNAVAILABLE', undefined, [], { 'retry-after': '5' });
  }
  if (error instanceof StorageWriteFailedError) return new ApiError('STORAGE_FAILURE');
  if (error instanceof InvalidCursorError) {
    return new ApiError('INVALID_PAGE_TOKEN', error.message, [
      { field: 'querystring.pageToken', message: 'is not a page token of this list' },
    ]);
  }
  return error;
}
