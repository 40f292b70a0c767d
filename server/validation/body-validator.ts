import type { Static, TSchema } from '@sinclair/typebox';
import { compiledOnFirstUse, sharedAjv, validationFailure } from './ajv';

/**
 * A validator for one request body, compiled from its shared schema on first use, by the strict
 * Ajv instance Fastify validates JSON bodies with (the same rules, the same messages). Services call it only
 * after they checked role and category, so a caller who may not make the change never learns the
 * schema (DESIGN §13). A failure is the one error shape: VALIDATION_FAILED naming each field.
 */
export function bodyValidator<T extends TSchema>(schema: T): (body: unknown) => Static<T> {
  const validate = compiledOnFirstUse(() => sharedAjv(false).compile(schema));
  return (body) => {
    if (validate(body)) return body as Static<T>;
    throw validationFailure(validate.errors ?? [], 'body');
  };
}
