import { ListItemSchema } from '../../shared';

/**
 * A list answer's JSON written straight into bytes, for a field selection without `cover` (its
 * items are records, each selected key a string, integer or boolean of the record).
 *
 * fast-json-stringify built the answer as a string of many pieces (a rope) that `Buffer.from`
 * then walked and encoded again: with the string escaping done char by char in JS, that was about
 * a fifth of an uncached list request's CPU. Here each byte is stored once into a scratch buffer
 * and copied out; a string goes byte by byte while it is plain ASCII with nothing to escape, and
 * otherwise through JSON.stringify, which is what fast-json-stringify does with such a string, so
 * the bytes are the same as its answer's. A value of another type than the schema's (never in a
 * stored record) makes the writer give up (undefined), and the caller serializes as before.
 */

/** What each list key but `cover` holds, read from ListItemSchema so the two cannot drift. */
type Kind = 'string' | 'integer' | 'boolean';

interface Field {
  key: string;
  kind: Kind;
  /** `{"key":` for the item's first key, `,"key":` for the others. */
  opening: Uint8Array;
  following: Uint8Array;
}

export type ListAnswerWriter = (
  items: readonly object[],
  total: number,
  nextPageToken: string,
) => Buffer | undefined;

const encode = (text: string) => new Uint8Array(Buffer.from(text, 'latin1'));
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const TRUE = encode('true');
const FALSE = encode('false');
const LISTS_OPENING = encode('{"lists":[');
const RESULT = encode('],"result":');
const TOTAL = encode(',"total":');
const NEXT_PAGE_TOKEN = encode(',"nextPageToken":');

/** Most answers fit (a page of 100 small items is 3–10 kB); a larger one grows it for a while. */
const SCRATCH_BYTES = 64 * 1024;
/** A scratch buffer grown past this for a large answer is not kept for the next one. */
const KEEP_BYTES = 1024 * 1024;

/**
 * One scratch buffer for the process: a writer fills it and copies the answer out in one
 * synchronous call, so answers never share it.
 */
class ByteWriter {
  private buffer = Buffer.allocUnsafe(SCRATCH_BYTES);
  private at = 0;

  /** Room for `bytes` more bytes. */
  reserve(bytes: number): void {
    const needed = this.at + bytes;
    if (needed <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(needed, this.buffer.length * 2));
    this.buffer.copy(grown, 0, 0, this.at);
    this.buffer = grown;
  }

  bytes(bytes: Uint8Array): void {
    this.reserve(bytes.length);
    const buffer = this.buffer;
    let at = this.at;
    for (let index = 0; index < bytes.length; index++) buffer[at++] = bytes[index]!;
    this.at = at;
  }

  /** Text known to be ASCII with nothing to escape (the digits of a number). */
  ascii(text: string): void {
    this.reserve(text.length);
    const buffer = this.buffer;
    let at = this.at;
    for (let index = 0; index < text.length; index++) buffer[at++] = text.charCodeAt(index);
    this.at = at;
  }

  /** A JSON string literal; as JSON.stringify writes it, encoded in UTF-8. */
  string(text: string): void {
    const length = text.length;
    // JSON.stringify writes at most 6 bytes per UTF-16 unit (`\u001f`, a lone surrogate).
    this.reserve(6 * length + 2);
    const buffer = this.buffer;
    let at = this.at;
    buffer[at++] = QUOTE;
    for (let index = 0; index < length; index++) {
      const code = text.charCodeAt(index);
      if (code < 0x20 || code >= 0x80 || code === QUOTE || code === BACKSLASH) {
        this.at += buffer.write(JSON.stringify(text), this.at, 'utf8');
        return;
      }
      buffer[at++] = code;
    }
    buffer[at++] = QUOTE;
    this.at = at;
  }

  /** The bytes written since the last take, in a buffer of their own; the scratch is reused. */
  take(): Buffer {
    const answer = Buffer.allocUnsafe(this.at);
    this.buffer.copy(answer, 0, 0, this.at);
    this.abandon();
    return answer;
  }

  abandon(): void {
    this.at = 0;
    if (this.buffer.length > KEEP_BYTES) this.buffer = Buffer.allocUnsafe(SCRATCH_BYTES);
  }
}

const writer = new ByteWriter();

function kindOf(key: string): Kind | undefined {
  const type = (ListItemSchema.properties as Record<string, { type?: unknown }>)[key]?.type;
  return type === 'string' || type === 'integer' || type === 'boolean' ? type : undefined;
}

/**
 * The writer of answers whose items have `keys` (in the schema's order, as the serializer writes
 * them), or undefined when one of them is not a plain string, integer or boolean (`cover`).
 */
export function listAnswerWriter(keys: readonly string[]): ListAnswerWriter | undefined {
  const fields: Field[] = [];
  for (const key of keys) {
    const kind = kindOf(key);
    if (kind === undefined) return undefined;
    const name = JSON.stringify(key);
    fields.push({ key, kind, opening: encode(`{${name}:`), following: encode(`,${name}:`) });
  }
  return (items, total, nextPageToken) => {
    writer.bytes(LISTS_OPENING);
    for (let index = 0; index < items.length; index++) {
      if (index > 0) writer.ascii(',');
      if (!writeItem(items[index] as Record<string, unknown>, fields)) {
        writer.abandon();
        return undefined;
      }
    }
    writer.bytes(RESULT);
    writer.ascii(String(items.length));
    writer.bytes(TOTAL);
    writer.ascii(String(total));
    writer.bytes(NEXT_PAGE_TOKEN);
    writer.string(nextPageToken);
    writer.ascii('}');
    return writer.take();
  };
}

/** One item's selected keys; an undefined one is left out. False: a value of another type. */
function writeItem(item: Record<string, unknown>, fields: readonly Field[]): boolean {
  let first = true;
  for (const field of fields) {
    const value = item[field.key];
    if (value === undefined) continue;
    switch (field.kind) {
      case 'string':
        if (typeof value !== 'string') return false;
        writer.bytes(first ? field.opening : field.following);
        writer.string(value);
        break;
      case 'integer':
        if (!Number.isInteger(value)) return false;
        writer.bytes(first ? field.opening : field.following);
        writer.ascii(String(value));
        break;
      case 'boolean':
        if (typeof value !== 'boolean') return false;
        writer.bytes(first ? field.opening : field.following);
        writer.bytes(value ? TRUE : FALSE);
        break;
    }
    first = false;
  }
  writer.ascii(first ? '{}' : '}');
  return true;
}
