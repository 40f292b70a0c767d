import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { compiledOnFirstUse, sharedAjv } from '../../../server/validation/ajv';

const Query = Type.Object(
  { pageSize: Type.Integer({ minimum: 1 }), staffPick: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

describe('a validator compiled on first use', () => {
  it('compiles nothing until it first validates, then only once', () => {
    let compiles = 0;
    const validate = compiledOnFirstUse(() => {
      compiles++;
      return sharedAjv(true).compile(Query);
    });
    expect(compiles).toBe(0);
    expect(validate({ pageSize: '5' })).toBe(true);
    expect(validate({ pageSize: '6' })).toBe(true);
    expect(compiles).toBe(1);
  });

  it('answers and reports errors as the compiled validator does, where Fastify reads them', () => {
    const compiled = sharedAjv(false).compile(Query);
    const lazy = compiledOnFirstUse(() => sharedAjv(false).compile(Query));
    for (const data of [{ pageSize: 0, extra: 1 }, { pageSize: 'x' }, { pageSize: 3 }, null]) {
      expect(lazy(data)).toBe(compiled(data));
      expect(lazy.errors).toEqual(compiled.errors);
    }
    // Fastify passes the parent object (so that Ajv may replace a coerced root) only to a
    // validator that has a schemaEnv.
    expect(lazy.schemaEnv).toBe(compiled.schemaEnv);
    expect(lazy.schema).toBe(Query);
  });

  it('coerces through the parent object as Fastify calls it', () => {
    const lazy = compiledOnFirstUse(() => sharedAjv(true).compile(Type.Integer()));
    const request = { query: '42' as unknown };
    expect(lazy(request.query, { parentData: request, parentDataProperty: 'query' } as never)).toBe(
      true,
    );
    expect(request.query).toBe(42);
  });
});
