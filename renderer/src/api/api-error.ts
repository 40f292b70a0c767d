import { type ErrorBody, type ErrorCode, waitInWords } from '../../../shared';

/** An answer from the API that was not a success, carrying the server's error body when it sent one. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode | null;
  readonly body: ErrorBody | null;
  readonly retryAfterSeconds: number | null;

  constructor(status: number, body: ErrorBody | null, retryAfterSeconds: number | null = null) {
    super(body?.message ?? `The server answered ${status}.`);
    this.name = 'ApiError';
    this.status = status;
    this.body = body;
    this.code = body?.code ?? null;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  /**
   * The server names fields like "body.projectTitle" or "body.generalTag/3"; forms key their
   * inputs by the bare field name, so strip the location prefix and any item index.
   */
  fieldErrors(): Record<string, string> {
    const errors: Record<string, string> = {};
    for (const detail of this.body?.details ?? []) {
      if (!detail.field) continue;
      const field = fieldNameOf(detail.field);
      if (field && !(field in errors)) errors[field] = detail.message;
    }
    return errors;
  }
}

/** The server could not be reached at all (offline, server stopped, connection reset). */
export class NetworkError extends Error {
  constructor(cause?: unknown) {
    super('The server cannot be reached.', { cause });
    this.name = 'NetworkError';
  }
}

export function fieldNameOf(path: string): string {
  const withoutLocation = path.replace(/^(body|query|querystring|params)[./]/, '');
  const [first] = withoutLocation.split(/[./[\]]/).filter(Boolean);
  return first ?? '';
}

/** A sentence a person can act on, for toasts and form banners. */
export function describeError(error: unknown): string {
  if (error instanceof NetworkError)
    return 'The server cannot be reached. Check your connection and try again.';
  if (error instanceof ApiError) {
    switch (error.status) {
      case 401:
        return 'Your session has ended. Please sign in again.';
      case 403:
        return error.body?.message ?? 'Your role does not allow this action.';
      case 413:
        return `Too large: ${error.body?.message ?? 'the file is over the size limit.'}`;
      case 415:
        return `Not accepted: ${error.body?.message ?? 'this type of file is not accepted here.'}`;
      case 429:
        return (
          error.body?.message ??
          (error.retryAfterSeconds
            ? `Too many attempts. Try again in ${waitInWords(error.retryAfterSeconds)}.`
            : 'Too many attempts. Try again later.')
        );
      default:
        return error.message;
    }
  }
  if (error instanceof Error) return error.message;
  return 'Something went wrong.';
}
