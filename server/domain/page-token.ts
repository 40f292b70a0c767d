import {
  createHmac,
  createSecretKey,
  hash,
  randomBytes,
  timingSafeEqual,
  type KeyObject,
} from 'node:crypto';
import { ApiError } from '../errors';
import type { Cursor, ListScope, SortValue } from './list-query';

const TOKEN_VERSION = 1;
const MAC_BYTES = 16;

/** What a token is bound to: the same orderBy, filter, q and visibility must come back with it. */
export type TokenScope = Pick<
  ListScope,
  'order' | 'orderKey' | 'filterKey' | 'searchKey' | 'visibleOnly'
>;

interface Payload {
  v: number;
  /** Hash of the scope; lets a foreign token be told apart from a forged one. */
  s: string;
  /** The last item's sort values, then its portfolioId. */
  c: [...SortValue[], string];
}

/** Hashes of the scopes seen lately (a hash was about 3 % of a list request); emptied when full. */
const scopeHashes = new Map<string, string>();
const MAX_SCOPE_HASHES = 1024;

/**
 * A query without a search hashes exactly as before `q` existed, so tokens issued then still work.
 */
function scopeHash(scope: TokenScope): string {
  const search = scope.searchKey === '' ? '' : `\nq ${scope.searchKey}`;
  const text = `${scope.orderKey}\n${scope.filterKey}\n${scope.visibleOnly ? 'viewer' : 'staff'}${search}`;
  let scoped = scopeHashes.get(text);
  if (scoped === undefined) {
    scoped = hash('sha256', text, 'base64url').slice(0, 16);
    if (scopeHashes.size === MAX_SCOPE_HASHES) scopeHashes.clear();
    scopeHashes.set(text, scoped);
  }
  return scoped;
}

function invalidToken(message: string): ApiError {
  return new ApiError('INVALID_PAGE_TOKEN', message, [{ field: 'querystring.pageToken', message }]);
}

/**
 * Opaque keyset cursors: `base64url(payload).base64url(HMAC-SHA256)`. The secret is a setting of
 * the backend, made on first start, so tokens outlive a restart; a token from another library
 * fails the signature like a forged one.
 */
export class PageTokens {
  /** A key object: HMAC with it skips preparing the raw key on every token. */
  private readonly key: KeyObject;

  private constructor(secret: Buffer) {
    this.key = createSecretKey(secret);
  }

  /** Tokens signed with `secret` (32 random bytes, base64), e.g. one every instance shares. */
  static withSecret(secret: string): PageTokens {
    return new PageTokens(Buffer.from(secret, 'base64'));
  }

  /** A new random secret, base64. */
  static newSecret(): string {
    return randomBytes(32).toString('base64');
  }

  /** HMAC-SHA256 of `body`, whole: a token carries its first MAC_BYTES. */
  private mac(body: string): Buffer {
    return createHmac('sha256', this.key).update(body).digest();
  }

  encode(cursor: Cursor, scope: TokenScope): string {
    const payload: Payload = {
      v: TOKEN_VERSION,
      s: scopeHash(scope),
      c: [...cursor.values, cursor.id],
    };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.mac(body).toString('base64url', 0, MAC_BYTES)}`;
  }

  /** The cursor in `token`, or a 400 saying why it cannot be used for this query. */
  decode(token: string, scope: TokenScope): Cursor {
    const [body, signature, extra] = token.split('.');
    if (!body || !signature || extra !== undefined) {
      throw invalidToken(
        'pageToken is malformed; pass nextPageToken from the previous page unchanged.',
      );
    }
    const given = Buffer.from(signature, 'base64url');
    const expected = this.mac(body).subarray(0, MAC_BYTES);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw invalidToken(
        'pageToken was altered or was not issued by this server; pass nextPageToken unchanged.',
      );
    }
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Payload;
    if (payload.v !== TOKEN_VERSION) throw invalidToken('pageToken is from another version.');
    if (payload.s !== scopeHash(scope)) {
      throw invalidToken(
        'pageToken belongs to another query; send the same orderBy, filter and q as for the first page.',
      );
    }
    const values = payload.c.slice(0, -1) as SortValue[];
    const id = payload.c.at(-1);
    if (typeof id !== 'string' || values.length !== scope.order.length)
      throw invalidToken('pageToken is malformed.');
    return { values, id };
  }
}
