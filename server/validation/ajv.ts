import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import type { ErrorDetail } from '../../shared';

/**
 * Ajv as the API validates with, and its errors in the API's words: shared by the HTTP layer
 * (the validation plugin, the error handler) and the services that validate bodies themselves,
 * so neither depends on the other.
 */

export function createAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    // Unknown fields must fail (schemas say additionalProperties: false), never be dropped.
    removeAdditional: false,
    useDefaults: true,
    coerceTypes,
    strict: false,
    // The schemas are TypeBox's, checked by the type checker and the tests; checking them against
    // the JSON Schema meta-schema at every start cost ~50 ms.
    validateSchema: false,
  });
  addFormats(ajv);
  return ajv;
}

/** Turns Ajv errors into the API's details, naming each field as `<part>.<path>`. */
export function validationDetails(errors: ErrorObject[], part: string): ErrorDetail[] {
  const details = errors
    .filter((error) => !(error.keyword === 'anyOf' || error.keyword === 'oneOf'))
    .map((error) => {
      const path = error.instancePath.split('/').filter(Boolean);
      const params = error.params as Record<string, unknown>;
      if (error.keyword === 'required') path.push(String(params.missingProperty));
      if (error.keyword === 'additionalProperties') {
        path.push(String(params.additionalProperty));
        return { field: [part, ...path].join('.'), message: 'is not a known field' };
      }
      const message =
        error.keyword === 'pattern' && error.schema === '\\S'
          ? 'must not be blank'
          : error.keyword === 'required'
            ? 'is required'
            : (error.message ?? 'is not valid');
      return { field: [part, ...path].join('.'), message };
    });
  // A union reports one error per branch; say each field's problem once.
  const seen = new Set<string>();
  return details.filter((detail) => {
    const key = `${detail.field}|${detail.message}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
}
