import { STATUS_CODES } from 'node:http';
import { ERROR_CODES, type ErrorBody, type ErrorCode, type ErrorDetail } from '../shared';

/** An error the API answers with on purpose: a catalogued code, its status, and details. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly statusCode: number;

  constructor(
    readonly code: ErrorCode,
    message: string = ERROR_CODES[code].message,
    readonly details: ErrorDetail[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.statusCode = ERROR_CODES[code].statusCode;
  }
}

export function errorBody(error: ApiError): ErrorBody {
  return {
    result: 'error',
    statusCode: error.statusCode,
    error: STATUS_CODES[error.statusCode] ?? 'Error',
    code: error.code,
    message: error.message,
    details: error.details,
  };
}
