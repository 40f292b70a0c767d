import { ApiError, describeError, fieldNameOf } from '../api/api-error';
import { type FieldErrors, formFieldOf } from './portfolio-form-model';

/**
 * Splits a failed save into messages under the fields the server named, and one message for
 * the whole form (for anything not tied to a field the form shows).
 */
export function splitServerError(error: unknown): {
  fieldErrors: FieldErrors;
  formError: string | null;
} {
  if (!(error instanceof ApiError) || error.status !== 400)
    return { fieldErrors: {}, formError: describeError(error) };
  const fieldErrors: FieldErrors = {};
  const unplaced: string[] = [];
  for (const detail of error.body?.details ?? []) {
    const field = detail.field ? formFieldOf(fieldNameOf(detail.field)) : null;
    if (field && !fieldErrors[field]) fieldErrors[field] = detail.message;
    else if (!field) unplaced.push(detail.message);
  }
  const placed = Object.keys(fieldErrors).length > 0;
  const formError = placed
    ? unplaced.length > 0
      ? `Some fields need attention. ${unplaced.join(' ')}`
      : 'Some fields need attention; see the messages below them.'
    : [error.message, ...unplaced].join(' ');
  return { fieldErrors, formError };
}
