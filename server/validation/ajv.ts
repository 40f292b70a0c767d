import type Ajv from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type addFormats from 'ajv-formats';
import { ApiError } from '../errors';
import { lazyRequire } from '../lazy-require';
import { plainDetails } from './error-words';

/**
 * Ajv as the API validates with, and its errors in the API's words: shared by the HTTP layer
 * (the validation plugin, the error handler) and the services that validate bodies themselves,
 * so neither depends on the other.
 *
 * Ajv is loaded, and each schema compiled, on first use: compiling every route's schemas at start
 * took a fifth of a second of a cold start, loading Ajv a tenth more, before any request came.
 */

const loadAjv = lazyRequire<typeof Ajv>('ajv');
const loadFormats = lazyRequire<typeof addFormats>('ajv-formats');

export function createAjv(coerceTypes: boolean): Ajv {
  const Ajv = loadAjv();
  const ajv = new Ajv({
    allErrors: true,
    // Unknown fields must fail (schemas say additionalProperties: false), never be dropped.
    removeAdditional: false,
    useDefaults: true,
    coerceTypes,
    strict: false,
    // Errors carry the schema that failed, so a schema's own words (`x-words`) can be said.
    verbose: true,
    // The schemas are TypeBox's, checked by the type checker and the tests; checking them against
    // the JSON Schema meta-schema at every start cost ~50 ms.
    validateSchema: false,
  });
  loadFormats()(ajv);
  return ajv;
}

let strictAjv: Ajv | undefined;
let coercingAjv: Ajv | undefined;

/**
 * The process's two Ajv instances, made on first use: strict for JSON bodies and path parameters
 * ("true" is not a boolean), coercing for query strings and headers, which arrive as text.
 */
export function sharedAjv(coerceTypes: boolean): Ajv {
  if (coerceTypes) return (coercingAjv ??= createAjv(true));
  return (strictAjv ??= createAjv(false));
}

/**
 * A validator that compiles its schema when it first validates. It behaves as the compiled one
 * does where Fastify looks: it takes Ajv's (data, context) and sets `errors` after each call,
 * and its `schemaEnv` (which tells Fastify to pass the parent object, so that Ajv may replace a
 * coerced root) and `schema` are the compiled function's.
 */
export function compiledOnFirstUse(compile: () => ValidateFunction): ValidateFunction {
  let compiled: ValidateFunction | undefined;
  const validator = () => (compiled ??= compile());
  const lazy = ((data: unknown, context?: object) => {
    const validate = validator();
    const valid = validate(data, context as never);
    lazy.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  Object.defineProperties(lazy, {
    schemaEnv: { get: () => validator().schemaEnv },
    schema: { get: () => validator().schema },
  });
  return lazy;
}

/** The one refusal of a request part that failed its schema: the first problem leads. */
export function validationFailure(errors: ErrorObject[], part: string): ApiError {
  const details = plainDetails(errors, part);
  return new ApiError(
    'VALIDATION_FAILED',
    details[0]?.message ?? 'The request is not valid.',
    details,
  );
}
