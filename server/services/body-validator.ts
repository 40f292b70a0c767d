import type { Static, TSchema } from '@sinclair/typebox';
import { ApiError } from '../errors';
import { createAjv, validationDetails } from '../validation/ajv';

/** The strict instance Fastify validates JSON bodies with: the same rules, the same messages. */
const ajv = createAjv(false);

/**
 * A validator for one request body, compiled once from its shared schema. Services call it only
 * after they checked role and category, so a caller who may not make the change never learns the
 * schema (DESIGN §13). A failure is the one error shape: VALIDATION_FAILED naming each field.
 */
export function bodyValidator<T extends TSchema>(schema: T): (body: unknown) => Static<T> {
  const validate = ajv.compile(schema);
  return (body) => {
    if (validate(body)) return body as Static<T>;
    const details = validationDetails(validate.errors ?? [], 'body');
    const first = details[0];
    const message = first ? `${first.field} ${first.message}` : 'The request is not valid.';
    throw new ApiError('VALIDATION_FAILED', message, details);
  };
}
