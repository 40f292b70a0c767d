import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import fastJsonStringify from 'fast-json-stringify';
import fp from 'fastify-plugin';
import type { ErrorDetail } from '../../shared';

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
    // Response serializers are compiled once per schema object, not once per route and status:
    // every route's error statuses share one ErrorBody schema, and compiling it for each of them
    // was most of the serializer work at start.
    const serializers = new WeakMap<object, (data: unknown) => string>();
    app.setSerializerCompiler(({ schema }) => {
      let serialize = serializers.get(schema);
      if (serialize === undefined) {
        serialize = fastJsonStringify(schema as Parameters<typeof fastJsonStringify>[0]);
        serializers.set(schema, serialize);
      }
      return serialize;
    });
    // Bodies are JSON (or multipart uploads). Fastify's built-in text/plain parser would pass a
    // plain-text body on to schema validation (a 400) instead of refusing its type with 415.
    app.removeContentTypeParser('text/plain');
    // Some HTTP clients send Content-Type: application/json on every request, a DELETE without a
    // body included; the default parser would call that empty body malformed JSON. Any other
    // empty JSON body still is (400 MALFORMED_JSON), and everything else goes to Fastify's own
    // parser with the instance's prototype-poisoning rules.
    const parseJson = app.getDefaultJsonParser(
      app.initialConfig.onProtoPoisoning ?? 'error',
      app.initialConfig.onConstructorPoisoning ?? 'error',
    );
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      if (body === '' && request.method === 'DELETE') return done(null, undefined);
      parseJson(request, body as string, done);
    });
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
