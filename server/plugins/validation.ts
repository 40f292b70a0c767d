import type { ErrorObject, ValidateFunction } from 'ajv';
import type {
  FastifyInstance,
  FastifySchemaCompiler,
  FastifySerializerCompiler,
  FastifyServerOptions,
} from 'fastify';
import type fastJsonStringify from 'fast-json-stringify';
import fp from 'fastify-plugin';
import { lazyRequire } from '../lazy-require';
import { compiledOnFirstUse, sharedAjv } from '../validation/ajv';

const loadFastJsonStringify = lazyRequire<typeof fastJsonStringify>('fast-json-stringify');

/** The only spelling of an integer a query string may use: Ajv's coercion would also take
 *  `0x10`, `1e3`, `2.56e2`, ` 12` or `+5`, since it converts with Number(). */
const DECIMAL_INTEGER = /^(0|[1-9][0-9]*)$/;

/** Top-level properties of an object schema declared as integers. */
function integerProperties(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties;
  return Object.entries(properties ?? {})
    .filter(([, property]) => property.type === 'integer')
    .map(([name]) => name);
}

/**
 * Wraps a coercing validator so that each integer property given as text must be written in
 * plain decimal digits before Ajv converts it. One place for every integer query parameter.
 */
export function withStrictIntegers(schema: unknown, validate: ValidateFunction): ValidateFunction {
  const names = integerProperties(schema);
  if (names.length === 0) return validate;
  const strict = ((data: Record<string, unknown> | null, context?: object) => {
    const errors: ErrorObject[] = names
      .filter((name) => typeof data?.[name] === 'string' && !DECIMAL_INTEGER.test(data[name]))
      .map((name) => ({
        keyword: 'type',
        instancePath: `/${name}`,
        schemaPath: `#/properties/${name}/type`,
        params: { type: 'integer' },
        message: 'must be a whole number written in decimal digits',
      }));
    if (errors.length > 0) {
      strict.errors = errors;
      return false;
    }
    const valid = validate(data, context as never);
    strict.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  // Fastify passes the parent object to validators that have one, so Ajv may replace the root.
  strict.schemaEnv = validate.schemaEnv;
  strict.schema = validate.schema;
  return strict;
}

type Serialize = (data: unknown) => string;

function validatorCompiler(): FastifySchemaCompiler<unknown> {
  return ({ schema, httpPart }) =>
    compiledOnFirstUse(() => {
      if (httpPart === 'body' || httpPart === 'params')
        return sharedAjv(false).compile(schema as object);
      const validate = sharedAjv(true).compile(schema as object);
      return httpPart === 'querystring' ? withStrictIntegers(schema, validate) : validate;
    });
}

function serializerCompiler(): FastifySerializerCompiler<unknown> {
  // Compiled once per schema object, not once per route and status: every route's error statuses
  // share one ErrorBody schema, and compiling it for each of them was most of this work.
  const serializers = new WeakMap<object, Serialize>();
  return ({ schema }) => {
    let compiled: Serialize | undefined;
    return (data: unknown) => {
      if (compiled === undefined) {
        compiled = serializers.get(schema as object);
        if (compiled === undefined) {
          compiled = loadFastJsonStringify()(schema as Parameters<typeof fastJsonStringify>[0]);
          serializers.set(schema as object, compiled);
        }
      }
      return compiled(data);
    };
  };
}

type CompilersFactory = NonNullable<
  NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']
>;

/**
 * The schema compilers of the app, set by the plugin below, and given to Fastify as its
 * `schemaController.compilersFactory` too, only so that Fastify does not load its default ones
 * (Ajv and fast-json-stringify, at every start). Bodies and path parameters are validated
 * without type coercion ("true" is not a boolean); query strings and headers arrive as text and
 * are coerced.
 *
 * Every validator and serializer is compiled when a request first needs it, not when its route
 * is registered: compiling all of them made a fifth of every start's CPU, at 100k portfolios a
 * tenth of the time to the first list. A schema that would not compile therefore fails at its
 * first request (500) rather than at start; the tests send every route's requests.
 */
// (Fastify types these factories after its default compilers' options; ours take none.)
export const schemaCompilers = {
  buildValidator: validatorCompiler,
  buildSerializer: serializerCompiler,
} as unknown as CompilersFactory;

/** How requests are validated and parsed, and answers serialized. */
export default fp(
  async function validation(app: FastifyInstance) {
    // Set here, and not only given to Fastify: routes read `app.validatorCompiler` as they register.
    app.setValidatorCompiler(validatorCompiler());
    app.setSerializerCompiler(serializerCompiler());
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
