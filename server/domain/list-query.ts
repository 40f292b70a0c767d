import {
  CASE_FOLDED_KEYS,
  FILTER_KEYS,
  foldCase,
  ORDER_KEYS,
  STAFF_FILTER_KEYS,
  type FilterKey,
  type OrderKey,
  type Role,
  type StoredFile,
} from '../../shared';
import { ApiError } from '../errors';
import { searchWords } from './search-text';

/**
 * `relevance` orders a full-text search by score (best first); it needs `q` and stands alone.
 */
export const RELEVANCE = 'relevance';
export type ListOrderKey = OrderKey | typeof RELEVANCE;

/** One sort key of `orderBy`; ties are always broken by portfolioId ascending. */
export interface OrderTerm {
  key: ListOrderKey;
  descending: boolean;
}

/** A portfolio's position under one orderBy: its sort values, then its id (a keyset cursor). */
export type SortValue = string | number;
export interface Cursor {
  values: SortValue[];
  id: string;
}

export const MAX_SEARCH_LENGTH = 200;

/** Parsed `filter`: different keys AND, the values of one key OR (DESIGN §4). */
export type Filter = ReadonlyMap<FilterKey, readonly string[]>;

export const DEFAULT_ORDER: readonly OrderTerm[] = [{ key: 'createdTime', descending: false }];
export const DEFAULT_PAGE_SIZE = 100;
const BOOLEAN_FILTER_KEYS: ReadonlySet<FilterKey> = new Set(['staffPick', 'published', 'active']);

function invalid(parameter: string, message: string): ApiError {
  return new ApiError('INVALID_QUERY', message, [{ field: `querystring.${parameter}`, message }]);
}

const validList = (keys: readonly string[]) => keys.join(', ');

/** An entirely empty parameter (`?filter=`) means "not given", as HTML forms send it. */
const given = (raw: string | undefined): raw is string => raw !== undefined && raw !== '';

/**
 * `createdTime,projectTitle-` → terms; an unknown or repeated key is a 400, and so is `relevance`
 * without a search or beside other keys.
 */
export function parseOrderBy(raw: string | undefined, searching = false): OrderTerm[] {
  if (!given(raw)) return [...DEFAULT_ORDER];
  if (raw.trim() === RELEVANCE) {
    if (!searching) throw invalid('orderBy', 'orderBy "relevance" needs a search: give q too.');
    return [{ key: RELEVANCE, descending: true }];
  }
  const seen = new Set<string>();
  return raw.split(',').map((item) => {
    const token = item.trim();
    const descending = token.endsWith('-');
    const key = descending ? token.slice(0, -1) : token;
    if (key === RELEVANCE)
      throw invalid(
        'orderBy',
        'orderBy "relevance" stands alone; it cannot be combined with other keys.',
      );
    if (!(ORDER_KEYS as readonly string[]).includes(key)) {
      throw invalid(
        'orderBy',
        key === ''
          ? `orderBy has an empty key; valid keys: ${validList(ORDER_KEYS)} (add "-" for descending).`
          : `Unknown orderBy key "${key}"; valid keys: ${validList(ORDER_KEYS)} (add "-" for descending).`,
      );
    }
    if (seen.has(key)) throw invalid('orderBy', `orderBy names "${key}" twice.`);
    seen.add(key);
    return { key: key as OrderKey, descending };
  });
}

/**
 * Splits at commas that are not escaped and undoes the escapes: `\,` is a comma and `\\` a
 * backslash inside a value. Any other use of `\` is a 400, so that later escapes can be added
 * without changing the meaning of a filter that works today.
 */
function splitEscaped(raw: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let index = 0; index < raw.length; index++) {
    const char = raw[index]!;
    if (char === ',') {
      parts.push(current);
      current = '';
    } else if (char === '\\') {
      const next = raw[index + 1];
      if (next !== ',' && next !== '\\') {
        throw invalid(
          'filter',
          next === undefined
            ? 'filter ends with a dangling "\\"; write "\\\\" for a backslash and "\\," for a comma.'
            : `filter has an unknown escape "\\${next}"; only "\\\\" (backslash) and "\\," (comma) are escapes.`,
        );
      }
      current += next;
      index++;
    } else {
      current += char;
    }
  }
  parts.push(current);
  return parts;
}

/** The filter keys `role` may use: viewers only see published, active portfolios anyway. */
export function filterKeysFor(role: Role): readonly FilterKey[] {
  return role === 'viewer' ? FILTER_KEYS : [...FILTER_KEYS, ...STAFF_FILTER_KEYS];
}

/**
 * `category:Art,staffPick:true` → key → values; each pair is split at its first colon. A
 * case-folded key's values are folded here (`category:Art` is `category:art`): every backend
 * then compares them with its portfolios' folded values, and spellings share caches and tokens.
 */
export function parseFilter(raw: string | undefined, role: Role): Filter {
  const filter = new Map<FilterKey, string[]>();
  if (!given(raw)) return filter;
  const allowed = filterKeysFor(role);
  for (const pair of splitEscaped(raw)) {
    const colon = pair.indexOf(':');
    if (colon === -1) {
      throw invalid(
        'filter',
        `filter pair "${pair}" has no ":"; write key:value pairs separated by commas (keys: ${validList(allowed)}).`,
      );
    }
    const key = pair.slice(0, colon).trim();
    const value = pair.slice(colon + 1);
    if (!(allowed as readonly string[]).includes(key)) {
      const staffOnly = (STAFF_FILTER_KEYS as readonly string[]).includes(key);
      throw invalid(
        'filter',
        staffOnly
          ? `filter key "${key}" is for editors and admins; viewers only see published, active portfolios. Valid keys: ${validList(allowed)}.`
          : `Unknown filter key "${key}"; valid keys: ${validList(allowed)}.`,
      );
    }
    if (BOOLEAN_FILTER_KEYS.has(key as FilterKey) && value !== 'true' && value !== 'false') {
      throw invalid('filter', `filter "${key}" takes true or false, not "${value}".`);
    }
    const values = filter.get(key as FilterKey) ?? [];
    const compared = CASE_FOLDED_KEYS.has(key as FilterKey) ? foldCase(value) : value;
    if (!values.includes(compared)) values.push(compared);
    filter.set(key as FilterKey, values);
  }
  return filter;
}

/**
 * `q` → its search terms (case- and accent-folded words), or null when not given. Over 200
 * characters, or no letter or digit at all: a 400 saying so.
 */
export function parseSearch(raw: string | undefined): string[] | null {
  if (!given(raw)) return null;
  if (raw.length > MAX_SEARCH_LENGTH)
    throw invalid(
      'q',
      `q is ${raw.length} characters long; at most ${MAX_SEARCH_LENGTH} are allowed.`,
    );
  const terms = [...new Set(searchWords(raw))];
  if (terms.length === 0)
    throw invalid(
      'q',
      'q has no letters or digits to search for; punctuation alone is not a search.',
    );
  return terms;
}

/** `pageSize` arrives validated (1..1000) by the route schema; absent means the default. */
export const pageSizeOf = (raw: number | undefined) => raw ?? DEFAULT_PAGE_SIZE;

/**
 * Canonical text of a query's order and filter, so that two spellings of the same query (keys in
 * another order, a value repeated) bind the same page tokens and share the same caches.
 */
export function canonicalOrder(order: readonly OrderTerm[]): string {
  return order.map((term) => `${term.key}${term.descending ? '-' : ''}`).join(',');
}

export function canonicalFilter(filter: Filter): string {
  return JSON.stringify(
    [...filter.entries()]
      .map(([key, values]) => [key, [...values].sort()] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}

/**
 * What a list query is about, besides paging: its order, filter, search and the caller's
 * visibility, with their canonical texts made once per request for the indexes, caches and page
 * tokens that key on them.
 */
export interface ListScope {
  order: readonly OrderTerm[];
  filter: Filter;
  /** Terms of `q` (parseSearch), every one of which must match; null: no search. */
  search: readonly string[] | null;
  /** Viewers: only published and active portfolios exist for them. */
  visibleOnly: boolean;
  /** canonicalOrder(order) */
  orderKey: string;
  /** canonicalFilter(filter) */
  filterKey: string;
  /** The search terms sorted, space-separated; "" without a search. */
  searchKey: string;
}

export function listScope(
  order: readonly OrderTerm[],
  filter: Filter,
  visibleOnly: boolean,
  search: readonly string[] | null = null,
): ListScope {
  return {
    order,
    filter,
    search,
    visibleOnly,
    orderKey: canonicalOrder(order),
    filterKey: canonicalFilter(filter),
    searchKey: search ? [...search].sort().join(' ') : '',
  };
}

/**
 * Field selection as a tree: `true` takes the whole value, a nested tree takes those parts of an
 * object (a `null` stays `null`).
 */
export interface FieldTree {
  [key: string]: FieldTree | true;
}

/**
 * Parses `field` against the keys a response offers (dotted for sub-fields, e.g.
 * `cover.dimention.width`). Returns null when `field` is not given: the caller's default.
 */
export function parseFields(raw: string | undefined, valid: readonly string[]): FieldTree | null {
  if (!given(raw)) return null;
  const tree: FieldTree = {};
  for (const item of raw.split(',')) {
    const path = item.trim();
    if (!valid.includes(path)) {
      throw invalid(
        'field',
        path === ''
          ? `field has an empty key; valid keys: ${validList(valid)}.`
          : `Unknown field "${path}"; valid keys: ${validList(valid)}.`,
      );
    }
    addPath(tree, path.split('.'));
  }
  return tree;
}

export function fieldTreeOf(paths: readonly string[]): FieldTree {
  const tree: FieldTree = {};
  for (const path of paths) addPath(tree, path.split('.'));
  return tree;
}

function addPath(tree: FieldTree, segments: string[]): void {
  const [head, ...rest] = segments;
  if (head === undefined) return;
  const node = tree[head];
  if (node === true) return; // the whole value covers any sub-field asked for too
  if (rest.length === 0) tree[head] = true;
  else addPath((tree[head] = node ?? {}), rest);
}

/** Does `tree` select `path` (or a whole value that contains it)? */
export function selects(tree: FieldTree, path: string): boolean {
  let node: FieldTree | true | undefined = tree;
  for (const segment of path.split('.')) {
    if (node === true) return true;
    node = node?.[segment];
    if (node === undefined) return false;
  }
  return node !== undefined;
}

/** Copies the parts of `source` that `tree` selects. */
export function project(source: Record<string, unknown>, tree: FieldTree): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key in tree) {
    const node = tree[key]!;
    const value = source[key];
    if (value === undefined) continue;
    if (node === true || value === null || typeof value !== 'object') out[key] = value;
    // A list of File objects: the sub-fields of each.
    else if (Array.isArray(value))
      out[key] = value.map((item: Record<string, unknown>) => project(item, node));
    else out[key] = project(value as Record<string, unknown>, node);
  }
  return out;
}

/** A stored file's `data` in an answer object (see FileDataOf in portfolio-view.ts). */
export type FileDataReader = (file: StoredFile) => string;

/**
 * The selected parts of a response object. `cover.data` is added only when the selection asks
 * for it (it is the one expensive field).
 */
export function selectFields(
  view: Record<string, unknown>,
  tree: FieldTree,
  cover: StoredFile | null,
  readData: FileDataReader,
): Record<string, unknown> {
  if (cover && selects(tree, 'cover.data') && view.cover) {
    view = { ...view, cover: { ...(view.cover as object), data: readData(cover) } };
  }
  return project(view, tree);
}
