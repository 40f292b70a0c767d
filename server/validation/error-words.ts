import type { ErrorObject } from 'ajv';
import type { ErrorDetail } from '../../shared';

/**
 * Ajv's validation errors in words a curator understands: the one place they are worded, for
 * every request part and every service that validates a body itself. A schema may carry its own
 * words in `x-words`, keyed by the keyword that failed (`{ pattern: 'A username uses …' }`);
 * otherwise the sentence is built from the field's name and the keyword's limit. No message
 * shows a regular expression or Ajv's own phrasing.
 */

/** A schema's own words for its failures, keyed by Ajv keyword. */
export type SchemaWords = Partial<Record<string, string>>;

/** Fields that read poorly when split from camelCase, as a sentence's subject. */
const FIELD_SUBJECTS: Record<string, string> = {
  allowEdit: 'The list of categories this user may edit',
  oboutProject: 'The text about the project',
  aboutProject: 'The text about the project',
  projectLanuching: 'The project launching',
  generalTag: 'The tags',
  relativeCategory: 'The related categories',
  certificateByOrg: 'The certificates',
  q: 'The search text',
};

const TYPE_WORDS: Record<string, string> = {
  string: 'text',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  array: 'a list',
  object: 'a set of named fields',
  null: 'empty',
};

const FORMAT_WORDS: Record<string, string> = {
  'date-time': 'a date and time',
  date: 'a date',
  uri: 'a web address',
  url: 'a web address',
  email: 'an e-mail address',
  uuid: 'an identifier',
};

const PART_NAMES: Record<string, string> = {
  body: 'the request',
  querystring: 'the query',
  query: 'the query',
  params: 'the address',
  headers: 'the headers',
};

/** "The project title" for projectTitle. */
function fieldSubject(name: string): string {
  return FIELD_SUBJECTS[name] ?? `The ${name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase()}`;
}

/** "The project title", "Entry 3 of the tags", "The request". */
function subjectOf(path: string[], part: string): string {
  const last = path.at(-1);
  if (last === undefined) return capital(PART_NAMES[part] ?? 'the request');
  if (/^\d+$/.test(last)) {
    const owner = path.at(-2);
    const of = owner ? ` of ${fieldSubject(owner).replace(/^The /, 'the ')}` : '';
    return `Entry ${Number(last) + 1}${of}`;
  }
  return fieldSubject(last);
}

const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
const plural = (count: number, one: string, many = `${one}s`) =>
  `${count.toLocaleString('en')} ${count === 1 ? one : many}`;

function ownWords(error: ErrorObject): string | undefined {
  const words = (error.parentSchema as { 'x-words'?: SchemaWords } | undefined)?.['x-words'];
  return words?.[error.keyword] ?? words?.['*'];
}

/**
 * One failed check in a sentence. `path` is the field's path inside its part (`['generalTag',
 * '2']`); for `required` and `additionalProperties` it already names the property concerned.
 */
function sentenceFor(error: ErrorObject, path: string[], part: string): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required') {
    const property = (
      error.parentSchema as { properties?: Record<string, { 'x-words'?: SchemaWords }> }
    )?.properties?.[String(params.missingProperty)];
    return property?.['x-words']?.required ?? `${subjectOf(path, part)} is required.`;
  }
  if (error.keyword === 'additionalProperties')
    return `"${String(params.additionalProperty)}" is not a field ${PART_NAMES[part] ?? 'the request'} takes.`;
  const own = ownWords(error);
  if (own) return own;
  const subject = subjectOf(path, part);
  const limit = Number(params.limit);
  switch (error.keyword) {
    case 'minLength':
      return limit <= 1
        ? `${subject} cannot be empty.`
        : `${subject} has at least ${plural(limit, 'character')}.`;
    case 'maxLength':
      return `${subject} has at most ${plural(limit, 'character')}.`;
    case 'pattern':
      // '\S' is how a required text says "not only spaces".
      return error.schema === '\\S'
        ? `${subject} cannot be empty or only spaces.`
        : `${subject} uses characters or a form this field does not accept.`;
    case 'type': {
      const types = String(params.type).split(',');
      return `${subject} must be ${types.map((type) => TYPE_WORDS[type] ?? type).join(' or ')}.`;
    }
    case 'const':
      return `${subject} must be "${String(params.allowedValue)}".`;
    case 'enum':
      return `${subject} must be one of: ${(params.allowedValues as unknown[]).join(', ')}.`;
    case 'minimum':
      return `${subject} is at least ${limit}.`;
    case 'maximum':
      return `${subject} is at most ${limit}.`;
    case 'exclusiveMinimum':
      return `${subject} is more than ${limit}.`;
    case 'exclusiveMaximum':
      return `${subject} is less than ${limit}.`;
    case 'minItems':
      return `${subject} needs at least ${plural(limit, 'entry', 'entries')}.`;
    case 'maxItems':
      return `${subject} holds at most ${plural(limit, 'entry', 'entries')}.`;
    case 'uniqueItems':
      return `${subject} lists the same entry twice.`;
    case 'minProperties':
      return limit <= 1 ? `Send at least one field to change.` : `Send at least ${limit} fields.`;
    case 'maxProperties':
      return `${subject} has at most ${plural(limit, 'field')}.`;
    case 'format':
      return `${subject} must be ${FORMAT_WORDS[String(params.format)] ?? 'in the expected form'}.`;
    case 'multipleOf':
      return `${subject} must be a multiple of ${String(params.multipleOf)}.`;
    default:
      return error.message && /^[A-Z]/.test(error.message)
        ? error.message
        : `${subject} is not valid.`;
  }
}

/**
 * Ajv's errors as the API's details, each naming its field as `<part>.<path>` with a sentence.
 * A union's branches fail one by one: its own anyOf/oneOf line says nothing more, a union of
 * constants (a role) says its allowed values once, and a field's same sentence is said once.
 */
export function plainDetails(errors: ErrorObject[], part: string): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const constants = new Map<string, { detail: ErrorDetail; values: string[]; path: string[] }>();
  for (const error of errors) {
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf') continue;
    const path = error.instancePath.split('/').filter(Boolean);
    const params = error.params as Record<string, unknown>;
    if (error.keyword === 'required') path.push(String(params.missingProperty));
    if (error.keyword === 'additionalProperties') path.push(String(params.additionalProperty));
    const field = [part, ...path].join('.');
    if (error.keyword === 'const' && !ownWords(error)) {
      const value = String(params.allowedValue);
      const group = constants.get(field);
      if (group) {
        group.values.push(value);
        continue;
      }
      const detail = { field, message: '' };
      constants.set(field, { detail, values: [value], path });
      details.push(detail);
      continue;
    }
    details.push({ field, message: sentenceFor(error, path, part) });
  }
  for (const { detail, values, path } of constants.values()) {
    const subject = subjectOf(path, part);
    detail.message =
      values.length === 1
        ? `${subject} must be "${values[0]}".`
        : `${subject} must be one of: ${values.join(', ')}.`;
  }
  const seen = new Set<string>();
  return details.filter((detail) => {
    const key = `${detail.field}|${detail.message}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
}
