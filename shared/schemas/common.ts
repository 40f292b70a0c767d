import { Type, type TSchema } from '@sinclair/typebox';

/** Integer milliseconds since the Unix epoch. */
export const Timestamp = Type.Integer({
  minimum: 0,
  description: 'Milliseconds since the Unix epoch',
});

/** The limits of tag-like lists (TagList): each entry's characters, and entries in a list. */
export const TAG_LIMITS = { tag: 100, tags: 50 } as const;

/** A required text: at least one non-space character. */
export const RequiredText = (maxLength: number, description?: string) =>
  Type.String({ minLength: 1, maxLength, pattern: '\\S', description });

export const OptionalText = (maxLength: number, description?: string) =>
  Type.String({ maxLength, description });

/** A tag-like list: short strings, bounded count. */
export const TagList = (description?: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: TAG_LIMITS.tag, pattern: '\\S' }), {
    maxItems: TAG_LIMITS.tags,
    description,
  });

/** An optional field that an explicit `null` clears (DESIGN §3). */
export const Clearable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const Identifier = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$',
  description: 'Letters, digits, "-" and "_"; at most 64 characters',
  'x-words': {
    pattern:
      'An identifier uses letters, digits, dashes and underscores, and starts with a letter or digit.',
    minLength: 'An identifier cannot be empty.',
    maxLength: 'An identifier has at most 64 characters.',
  },
});

export const Username = Type.String({
  minLength: 3,
  maxLength: 64,
  pattern: '^[a-z0-9][a-z0-9._-]*$',
  description: 'Lower-case letters, digits, ".", "-" and "_"; 3 to 64 characters',
  'x-words': {
    pattern:
      'A username uses lower-case letters, digits, dots, dashes and underscores, and starts with a letter or digit.',
    minLength: 'A username has at least 3 characters.',
    maxLength: 'A username has at most 64 characters.',
  },
});

/** A blob's address: its SHA-256 as 64 lower-case hex digits. */
export const Sha256Schema = Type.String({
  pattern: '^[0-9a-f]{64}$',
  description: 'Lower-case hex SHA-256',
  'x-words': { pattern: 'A file address (SHA-256) is 64 lower-case hexadecimal digits.' },
});
