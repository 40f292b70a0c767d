import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { ErrorDetail } from '../../shared';

function createAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    // Unknown fields must fail (schemas say additionalProperties: false), never be dropped.
    removeAdditional: false,
    useDefaults: true,
    coerceTypes,
    strict: false,
  });
  addFormats(ajv);
  return ajv;
}

/**
 * Bodies are validated without type coercion ("true" is not a boolean); query strings and
 * headers arrive as text and are coerced.
 */
export default fp(
  async function validation(app: FastifyInstance) {
    const strict = createAjv(false);
    const coercing = createAjv(true);
    app.setValidatorCompiler(({ schema, httpPart }) =>
      (httpPart === 'body' || httpPart === 'params' ? strict : coercing).compile(schema),
    );
    // Bodies are JSON (or multipart uploads). Fastify's built-in text/plain parser would pass a
    // plain-text body on to schema validation (a 400) instead of refusing its type with 415.
    app.removeContentTypeParser('text/plain');
  },
  { name: 'validation' },
);

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
