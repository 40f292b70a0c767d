import { Type } from '@sinclair/typebox';
import fc from 'fast-check';
import fastJsonStringify from 'fast-json-stringify';
import { describe, expect, it } from 'vitest';
import { ListItemSchema, ListResponseSchema } from '../../../shared';
import { listAnswerWriter } from '../../../server/http/list-answer-bytes';
import { createAjv } from '../../../server/validation/ajv';

type ListKey = keyof typeof ListItemSchema.properties;

/** Every list key but `cover`, in the schema's order. */
const KEYS = (Object.keys(ListItemSchema.properties) as ListKey[]).filter((key) => key !== 'cover');

/** What the route used before the writer, and still uses with `cover`. */
const serializerOf = (keys: readonly ListKey[]) =>
  fastJsonStringify(
    Type.Object({
      ...ListResponseSchema.properties,
      lists: Type.Array(Type.Pick(ListItemSchema, keys)),
    }),
  );

const validateAnswer = createAjv(false).compile(ListResponseSchema);

/** Any text at all: ASCII, escapes, controls, other scripts, emoji, lone surrogates. */
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('', 'Back\\slash', '"quoted"', 'tab\there', 'Café', '\ud800', '\u2028\u007f'),
);

const record = fc.record({
  portfolioId: text,
  projectTitle: text,
  category: text,
  memberBarcode: text,
  published: fc.boolean(),
  active: fc.boolean(),
  staffPick: fc.boolean(),
  createdTime: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  modifiedTime: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  revision: fc.integer({ min: 1, max: 2 ** 31 }),
  // Never written: the selection has no such key.
  projectDetail: text,
});

const page = fc.record({
  items: fc.array(record, { maxLength: 12 }),
  total: fc.nat(),
  token: fc.oneof(fc.constant(''), fc.base64String(), text),
});

describe('list answers written straight into bytes', () => {
  it('are the bytes fast-json-stringify writes, for every set of keys and any text', () => {
    const keySets = fc.subarray(KEYS, { minLength: 1 });
    fc.assert(
      fc.property(keySets, page, (keys, { items, total, token }) => {
        const written = listAnswerWriter(keys)!(items, total, token);
        const expected = serializerOf(keys)({
          lists: items,
          result: items.length,
          total,
          nextPageToken: token,
        });
        expect(written?.toString('utf8')).toBe(expected);
        expect(written).toEqual(Buffer.from(expected));
      }),
      { numRuns: 300 },
    );
  });

  it('are valid answers for every set of keys', () => {
    const items = ['Café "Zebra"', 'Back\\slash', '東京 😀', 'tab\there', 'plain'].map(
      (projectTitle, at) => ({
        portfolioId: `p0${at}`,
        projectTitle,
        category: 'Interior',
        memberBarcode: `M${at}`,
        published: at % 2 === 0,
        active: true,
        staffPick: at === 3,
        createdTime: 1_700_000_000_000 + at,
        modifiedTime: 1_700_000_000_500 + at,
        revision: at + 1,
      }),
    );
    for (let mask = 1; mask < 1 << KEYS.length; mask++) {
      const keys = KEYS.filter((_, at) => mask & (1 << at));
      const answer = JSON.parse(listAnswerWriter(keys)!(items, 40, 'abc.def')!.toString('utf8'));
      expect(validateAnswer(answer), JSON.stringify(validateAnswer.errors)).toBe(true);
      expect(answer.result).toBe(5);
      expect(Object.keys(answer.lists[0])).toEqual(keys);
    }
  });

  it('leave out a key an item lacks, as the serializer does', () => {
    const keys: ListKey[] = ['portfolioId', 'projectTitle', 'createdTime'];
    const items = [{ projectTitle: 'a' }, {}, { portfolioId: 'p1', createdTime: 5 }];
    expect(listAnswerWriter(keys)!(items, 3, '')!.toString()).toBe(
      serializerOf(keys)({ lists: items, result: 3, total: 3, nextPageToken: '' }),
    );
  });

  it('give up on a value of another type, and the next answer is whole', () => {
    const write = listAnswerWriter(['portfolioId', 'createdTime', 'staffPick'])!;
    expect(write([{ portfolioId: 'p1', createdTime: 1.5 }], 1, '')).toBeUndefined();
    expect(write([{ portfolioId: 7 }], 1, '')).toBeUndefined();
    expect(write([{ portfolioId: 'p1', staffPick: 'yes' }], 1, '')).toBeUndefined();
    expect(write([{ portfolioId: 'p1', createdTime: 2, staffPick: true }], 1, '')!.toString()).toBe(
      '{"lists":[{"portfolioId":"p1","createdTime":2,"staffPick":true}],"result":1,"total":1,"nextPageToken":""}',
    );
  });

  it('are not written for a selection with cover', () => {
    expect(listAnswerWriter(['portfolioId', 'cover'])).toBeUndefined();
  });

  it('hold answers larger than the scratch buffer, and each answer its own bytes', () => {
    const keys: ListKey[] = ['portfolioId', 'projectTitle'];
    const write = listAnswerWriter(keys)!;
    const items = Array.from({ length: 1000 }, (_, at) => ({
      portfolioId: `p${at}`,
      projectTitle: `${'"\u0001é'.repeat(100)}${'x'.repeat(at % 200)}`,
    }));
    const large = write(items, 1000, 'token')!;
    const small = write(items.slice(0, 1), 1000, '')!;
    expect(large.length).toBeGreaterThan(1024 * 1024);
    expect(large.toString()).toBe(
      serializerOf(keys)({ lists: items, result: 1000, total: 1000, nextPageToken: 'token' }),
    );
    expect(JSON.parse(small.toString()).lists).toEqual(items.slice(0, 1));
  });
});
