import {
  CASE_FOLDED_KEYS,
  FACET_KEYS,
  fieldKeysWhere,
  PORTFOLIO_FIELDS,
  type FacetKey,
  type FieldRow,
  type FilterKey,
  type FilterKind,
  type KeysWith,
  type OrderKey,
  type PortfolioRecord,
} from '../../../shared';
import { RELEVANCE, type ListScope, type OrderTerm } from '../../domain/list-query';
import type {
  Cursor,
  FacetCounts,
  FacetRequest,
  ListedKey,
  ListPage,
  ListRequest,
  SortValue,
} from '../../repositories/portfolio-repository-contract';
import { scoreExpression, searchCondition } from './search-sql';

/**
 * The list (DESIGN §4) as one SQL statement, answering exactly what the embedded index answers:
 * the same order and ties, the same totals, and cursors of the same shape (so page tokens are
 * made and read the same way whatever the backend).
 */

/** Collects parameter values and answers their placeholders. */
export class Parameters {
  readonly values: unknown[] = [];

  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/**
 * JavaScript's string order as bytes: memcmp over UTF-16BE compares code unit by code unit, as
 * JavaScript compares strings, so a bytea of it sorts exactly as the embedded index does.
 */
export function utf16Key(text: string): Buffer {
  return Buffer.from(text, 'utf16le').swap16();
}

/**
 * A text's position under a text order, as the embedded index keeps it: case-insensitive first,
 * then the raw text after a NUL, so the order is total and deterministic.
 */
export const textSortValue = (text: string): string => `${text.toLowerCase()}\u0000${text}`;

/** `score` is the relevance of a search, computed per row (see listStatement). */
const SORT_COLUMNS: Record<SqlOrderKey, string> = {
  relevance: 'score',
  createdTime: 'created_time',
  modifiedTime: 'modified_time',
  staffPick: 'staff_pick',
  projectTitle: 'title_key',
  category: 'category_key',
};

/**
 * The record keys a list item can be read from a row's typed columns (liveColumns) instead of
 * its JSON record, and which column holds each. Reading a key out of the JSON in SQL would cost
 * the database more than sending the whole record does (it parses the JSON: about 20 µs a row).
 */
const ITEM_COLUMNS: { readonly [K in ListedKey]?: string } = columnsWhere(() => true);

/** The field table's columns of the rows `test` accepts, by record key. */
function columnsWhere(test: (row: FieldRow) => boolean): Record<string, string> {
  return Object.fromEntries(
    fieldKeysWhere((row) => row.column !== undefined && test(row)).map((key) => [
      key,
      (PORTFOLIO_FIELDS[key] as FieldRow).column!,
    ]),
  );
}

/** The record key each order key's cursor value is made from. */
const ORDER_RECORD_KEYS: Record<OrderKey, ListedKey> = {
  createdTime: 'createdTime',
  modifiedTime: 'modifiedTime',
  staffPick: 'staffPick',
  projectTitle: 'projectTitle',
  category: 'category',
};

/**
 * The keys a page's items are read with from their columns: those the request asks for, the id,
 * and those its cursor is made of. Null when the request wants whole records, or a key that has
 * no column of its own: then the JSON record is sent as stored.
 */
function itemKeys(request: ListRequest): ListedKey[] | null {
  if (!request.fields) return null;
  const keys = new Set<ListedKey>(['portfolioId', ...request.fields]);
  for (const term of request.order)
    if (term.key !== RELEVANCE) keys.add(ORDER_RECORD_KEYS[term.key]);
  for (const key of keys) if (ITEM_COLUMNS[key] === undefined) return null;
  // In one order whatever the request's: the same keys make the same statement text.
  return ITEMS_IN_ORDER.filter((key) => keys.has(key));
}
const ITEMS_IN_ORDER = Object.keys(ITEM_COLUMNS) as ListedKey[];

/** The cursor value of a row under `key`: what the embedded index makes for it. */
function sortValue(
  record: Pick<PortfolioRecord, OrderKey>,
  score: number | null,
  key: SqlOrderKey,
): SortValue {
  switch (key) {
    case 'relevance':
      return score!;
    case 'createdTime':
    case 'modifiedTime':
      return record[key];
    case 'staffPick':
      return record.staffPick ? 1 : 0;
    case 'projectTitle':
    case 'category':
      return textSortValue(record[key]);
  }
}

/** A cursor value as the parameter its sort column compares with. */
function sortParameter(key: SqlOrderKey, value: SortValue): unknown {
  switch (key) {
    case 'relevance':
    case 'createdTime':
    case 'modifiedTime':
      return value;
    case 'staffPick':
      return value === 1;
    case 'projectTitle':
    case 'category':
      return utf16Key(String(value));
  }
}

type SqlOrderKey = OrderKey | typeof RELEVANCE;
type SqlOrderTerm = OrderTerm & { key: SqlOrderKey };

/** Relevance (best first) needs the search's terms to score by: parseOrderBy allows it only then. */
function sqlOrder(request: ListRequest): readonly SqlOrderTerm[] {
  if (request.order[0]?.key === RELEVANCE && !request.search)
    throw new Error('orderBy=relevance needs search terms.');
  return request.order;
}

export const cursorOf = (
  record: Pick<PortfolioRecord, OrderKey | 'portfolioId'>,
  score: number | null,
  order: readonly SqlOrderTerm[],
): Cursor => ({
  values: order.map((term) => sortValue(record, score, term.key)),
  id: record.portfolioId,
});

/** `%` and `_` match themselves inside a LIKE pattern (backslash is LIKE's escape). */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, '\\$&');

type FilteredBy<K extends FilterKind> = KeysWith<'filter', { readonly kind: K }>;
/**
 * The column an exact filter compares: a case-folded key's `<column>_lower` (its values folded
 * by JavaScript, as parseFilter folds the filter's), any other key's own.
 */
const EXACT_COLUMNS = Object.fromEntries(
  Object.entries(columnsWhere((row) => row.filter?.kind === 'exact')).map(([key, column]) => [
    key,
    CASE_FOLDED_KEYS.has(key as FilteredBy<'exact'>) ? `${column}_lower` : column,
  ]),
) as Record<FilteredBy<'exact'>, string>;
const ARRAY_COLUMNS = columnsWhere((row) => row.filter?.kind === 'array') as Record<
  FilteredBy<'array'>,
  string
>;
const BOOLEAN_COLUMNS = columnsWhere((row) => row.filter?.kind === 'flag') as Record<
  FilteredBy<'flag'>,
  string
>;

/**
 * PostgreSQL text cannot hold NUL (U+0000), so no stored text has one: a lookup for a text with
 * one matches nothing, and must not be sent (the database would refuse the statement).
 */
export const storable = (text: string): boolean => !text.includes('\u0000');

/** One filter key's condition: its values OR (DESIGN §4); null when it constrains nothing. */
function filterCondition(key: FilterKey, given: readonly string[], p: Parameters): string | null {
  const values = [...new Set(given.filter(storable))];
  if (values.length === 0) return 'false';
  const kind = PORTFOLIO_FIELDS[key].filter.kind;
  switch (kind) {
    case 'exact': {
      const column = EXACT_COLUMNS[key as FilteredBy<'exact'>];
      // One value as `=`, not `= ANY`: an index led by the column then yields the order's rows
      // in order (with ANY the planner cannot know they come from one value).
      return values.length === 1
        ? `${column} = ${p.add(values[0])}`
        : `${column} = ANY(${p.add(values)}::text[])`;
    }
    case 'array':
      return `${ARRAY_COLUMNS[key as FilteredBy<'array'>]} && ${p.add(values)}::text[]`;
    case 'flag':
      if (values.length > 1) return null; // true OR false
      return `${BOOLEAN_COLUMNS[key as FilteredBy<'flag'>]} = ${p.add(values[0] === 'true')}`;
    case 'contains': {
      // The same lower-casing as the embedded index (JavaScript's, stored in title_lower), the
      // one contains-filter there is (the title).
      // One LIKE per value (not LIKE ANY): each can use the trigram index, ORed as bitmaps.
      const likes = values.map(
        (value) => `title_lower LIKE ${p.add(`%${likeLiteral(value.toLowerCase())}%`)}`,
      );
      return `(${likes.join(' OR ')})`;
    }
  }
}

function whereClause(request: Omit<ListScope, 'order' | 'orderKey'>, p: Parameters): string {
  const conditions: string[] = [];
  if (request.visibleOnly) conditions.push('published AND active');
  if (request.search) conditions.push(searchCondition(request.search, (value) => p.add(value)));
  for (const [key, values] of request.filter) {
    const condition = filterCondition(key, values, p);
    if (condition) conditions.push(condition);
  }
  return conditions.length === 0 ? 'true' : conditions.join(' AND ');
}

/**
 * Strictly after `cursor` in the order: the first differing key decides (its direction says
 * which way), and equal keys fall to portfolioId ascending. Only the walked terms take part (a
 * term the filter holds constant is equal on every match). The leading keys' bound comes first
 * on its own, so the planner can start the index scan there.
 */
function afterClause(
  order: readonly SqlOrderTerm[],
  walked: readonly SqlOrderTerm[],
  cursor: Cursor,
  p: Parameters,
): string {
  const columns = walked.map((term) => SORT_COLUMNS[term.key]);
  const values = walked.map((term) =>
    p.add(sortParameter(term.key, cursor.values[order.indexOf(term)]!)),
  );
  const id = p.add(cursor.id);
  const alternatives: string[] = [];
  for (let index = 0; index <= walked.length; index++) {
    const equal = columns.slice(0, index).map((column, at) => `${column} = ${values[at]}`);
    const decisive =
      index === walked.length
        ? `portfolio_id > ${id}`
        : `${columns[index]} ${walked[index]!.descending ? '<' : '>'} ${values[index]}`;
    alternatives.push([...equal, decisive].join(' AND '));
  }
  if (walked.length === 0) return `(${alternatives.join(' OR ')})`;
  // The leading keys of one direction, as a row comparison: the index range of their index
  // (e.g. `(category_key, title_key) >= ($1, $2)` starts within the category, not at its start).
  const direction = walked[0]!.descending;
  let same = 1;
  while (same < walked.length && walked[same]!.descending === direction) same++;
  const row = (items: readonly string[]) =>
    items.length === 1 ? items[0]! : `(${items.join(', ')})`;
  const leading = `${row(columns.slice(0, same))} ${direction ? '<=' : '>='} ${row(values.slice(0, same))}`;
  return `${leading} AND (${alternatives.join(' OR ')})`;
}

/**
 * The order terms a page walks: a key the filter holds to one value (staffPick true or false) is
 * the same on every match, so leaving it out changes no order, and lets an index led by the
 * filter's column give the rest. Not so one category: the filter ignores case, and its
 * spellings sort apart.
 */
function walkedTerms(request: ListRequest, order: readonly SqlOrderTerm[]): SqlOrderTerm[] {
  const constant = (key: FilterKey) =>
    new Set(request.filter.get(key)?.filter(storable) ?? []).size === 1;
  return order.filter((term) => !(term.key === 'staffPick' && constant('staffPick')));
}

const orderClause = (order: readonly SqlOrderTerm[], table = '') =>
  [
    ...order.map((term) => `${table}${SORT_COLUMNS[term.key]} ${term.descending ? 'DESC' : 'ASC'}`),
    `${table}portfolio_id ASC`,
  ].join(', ');

/** A total counted before, valid while the library is still at that seq. */
export interface KnownTotal {
  seq: number;
  total: number;
}

/** Filter keys whose values portfolio_counts counts (migration 0005). */
const COUNTED_KEYS: ReadonlySet<FilterKey> = new Set(
  fieldKeysWhere(
    (row) => row.filter !== undefined && row.filter.kind !== 'contains',
  ) as FilterKey[],
);
const ARRAY_KEYS: ReadonlySet<FilterKey> = new Set(Object.keys(ARRAY_COLUMNS) as FilterKey[]);

/**
 * The total read from the counts the database keeps (migration 0005), when the request's matches
 * are one counted set or a union of disjoint ones: no search, and one key that constrains
 * (staffPick true OR false constrains nothing) with values of one portfolio each (an exact key's
 * values, or one element of an array key), or one staffPick value and categories. Null when the
 * matches must be counted.
 */
function keptTotal(request: ListRequest, p: Parameters): string | null {
  if (request.search) return null;
  const constraining = new Map(
    [...request.filter]
      .filter(([key, values]) => !(BOOLEAN_COLUMNS_KEYS.has(key) && new Set(values).size > 1))
      .map(([key, values]) => [key, [...new Set(values.filter(storable))]]),
  );
  const column = request.visibleOnly ? 'visible' : 'total';
  const sum = (key: string, values: readonly string[]) =>
    `(SELECT coalesce(sum(${column}), 0)::bigint FROM portfolio_counts
      WHERE key = ${p.add(key)} AND value = ANY(${p.add(values)}::text[]))`;
  if (constraining.size === 0) {
    return `(SELECT ${column} FROM portfolio_counts WHERE key = '' AND value = '')`;
  }
  const pick = constraining.get('staffPick');
  const categories = constraining.get('category');
  if (constraining.size === 2 && pick && categories) {
    return sum(
      'staffPick,category',
      categories.map((category) => `${pick[0]}:${category}`),
    );
  }
  if (constraining.size > 1) return null;
  const [key, values] = [...constraining][0]!;
  if (!COUNTED_KEYS.has(key) || (ARRAY_KEYS.has(key) && values.length > 1)) return null;
  return sum(key, values);
}
const BOOLEAN_COLUMNS_KEYS: ReadonlySet<string> = new Set(Object.keys(BOOLEAN_COLUMNS));

/**
 * One statement, so the page, its total and the seq they belong to come from one snapshot: the
 * total of all matches, and `limit + 1` matches after the cursor (the extra one says whether more
 * follow). A total of one filter key is read from the counts the database keeps with every write
 * (keptTotal). Any other total is counted, unless `known` was counted at the seq the library is
 * still at: every change to a live portfolio moves the library's seq, so it is still right, on
 * any instance, and the count never runs (an uncorrelated subquery in a CASE branch is evaluated
 * only when that branch is taken). `counted` says which: only a counted total is worth caching.
 */
export function listStatement(
  request: ListRequest<ListedKey>,
  known: KnownTotal | undefined,
): { text: string; values: unknown[]; counted: boolean; items: ListItems; generic: boolean } {
  const order = sqlOrder(request);
  const walked = walkedTerms(request, order);
  const p = new Parameters();
  const where = whereClause(request, p);
  const after = request.after ? ` AND ${afterClause(order, walked, request.after, p)}` : '';
  const limit = p.add(request.limit + 1);
  const sortColumns = walked.map((term) => SORT_COLUMNS[term.key]);
  // The score of each matching row, for a relevance order (a lateral column the page's WHERE,
  // ORDER BY and cursor bound can name); a constant otherwise, so every row has a score column.
  const relevance = walked.some((term) => term.key === RELEVANCE);
  const scored = relevance
    ? `portfolios, LATERAL (SELECT ${scoreExpression(request.search!, (value) => p.add(value))} AS score) scores`
    : 'portfolios';
  const kept = keptTotal(request, p);
  const total =
    kept ??
    `CASE WHEN library.seq = ${p.add(known?.seq ?? -1)} THEN ${p.add(known?.total ?? 0)}::bigint
        ELSE (SELECT count(*) FROM portfolios WHERE ${whereClause(request, p)}) END`;
  const keys = itemKeys(request);
  const names = keys ?? ['record'];
  // Whole records, or each key as a column named like the key (see ITEM_COLUMNS).
  const columns = keys ? keys.map((key) => `${ITEM_COLUMNS[key]!} AS "${key}"`) : ['record'];
  const cells = [...names.map((name) => `page."${name}"`), ...(relevance ? ['page.score'] : [])];
  // The page as one JSON text, an array per match: node reads one value instead of a row per
  // match (each a message parsed field by field), which cost it about as much again.
  const text = `
    SELECT library.seq, ${total} AS total, (
      SELECT json_agg(json_build_array(${cells.join(', ')}) ORDER BY ${orderClause(walked, 'page.')})::text
      FROM (
        SELECT ${columns.join(', ')}, portfolio_id${sortColumns.map((column) => `, ${column}`).join('')}
        FROM ${scored}
        WHERE ${where}${after}
        ORDER BY ${orderClause(walked)}
        LIMIT ${limit}
      ) page
    ) AS page
    FROM library`;
  return {
    text,
    values: p.values,
    counted: kept === null,
    items: keys ?? 'record',
    generic: genericPlanFits(request),
  };
}

/** Filter keys matched by equality on a btree-indexed column (see filterCondition). */
const EQUALITY_KEYS: ReadonlySet<FilterKey> = new Set([
  ...(Object.keys(EXACT_COLUMNS) as FilterKey[]),
  ...(Object.keys(BOOLEAN_COLUMNS) as FilterKey[]),
]);

/**
 * Whether one plan made without the values serves the statement for any values: only equality
 * filters, each served by a btree index (or an order index walked past the few it rejects), so
 * the plan is the same. A search's or a title's matches, or an array's, may be a handful or
 * nearly all, and their best plans differ by that (a bitmap of the matches, or the order's index
 * walked until the page fills): those are planned with their values at every execution.
 */
function genericPlanFits(request: ListRequest): boolean {
  return !request.search && [...request.filter.keys()].every((key) => EQUALITY_KEYS.has(key));
}

/** How a statement's matches hold their items: whole records, or these keys, in this order. */
export type ListItems = 'record' | readonly ListedKey[];

/**
 * The row of listStatement: the library's seq, the total, and the page as JSON: an array per
 * match of its record or its keys' values (see ListItems), then its relevance under a relevance
 * order; null when nothing matched.
 */
export interface ListRow {
  seq: number;
  total: number;
  page: string | null;
}

/** A listed item: at least the keys asked for, its id and the keys its cursor is made of. */
type ListedItem<K extends ListedKey> = Pick<PortfolioRecord, K | OrderKey | 'portfolioId'>;

function itemOf<K extends ListedKey>(match: unknown[], items: ListItems): ListedItem<K> {
  if (items === 'record') return match[0] as PortfolioRecord;
  const item: Record<string, unknown> = {};
  for (const [index, key] of items.entries()) item[key] = match[index];
  // itemKeys chose the keys: those asked for, the id and the order's (see ListedItem).
  return item as ListedItem<K>;
}

export function listPage<K extends ListedKey>(
  row: ListRow,
  request: ListRequest<K>,
  items: ListItems,
): ListPage<K> {
  const matches = row.page === null ? [] : (JSON.parse(row.page) as unknown[][]);
  const page = matches.slice(0, request.limit).map((match) => itemOf<K>(match, items));
  const last = page.at(-1);
  const order = sqlOrder(request);
  const score = (match: unknown[]) =>
    order.some((term) => term.key === RELEVANCE) ? (match.at(-1) as number) : null;
  return {
    items: page,
    total: row.total,
    next:
      matches.length > request.limit && last
        ? cursorOf(last, score(matches[page.length - 1]!), order)
        : null,
  };
}

/** The column each facet key's values are counted from: the stored spelling, typed. */
const FACET_COLUMNS = columnsWhere((row) => row.facet !== undefined) as Record<FacetKey, string>;
const FACET_ARRAYS: ReadonlySet<FacetKey> = new Set(
  FACET_KEYS.filter((key) => PORTFOLIO_FIELDS[key].kind === 'tags'),
);
/** The key portfolio_counts keeps a facet key's stored spellings under (migration 0009). */
const countedKeyOf = (key: FacetKey) => (CASE_FOLDED_KEYS.has(key) ? `${key}Spelling` : key);

/** One row of facetsStatement: a key, one of its values and its matches. */
export interface FacetRow {
  key: string;
  value: string;
  count: string | number;
}

/**
 * The facets of a request as one statement. Without a filter or search, the counts the database
 * keeps with every write (portfolio_counts, migration 0009); otherwise the list's matches (the
 * same WHERE) grouped by each key's column, an array by its distinct elements.
 */
export function facetsStatement(request: FacetRequest): { text: string; values: unknown[] } {
  const p = new Parameters();
  if (request.filter.size === 0 && request.search === null) {
    const column = request.visibleOnly ? 'visible' : 'total';
    return {
      text: `SELECT key, value, ${column} AS count FROM portfolio_counts
        WHERE key = ANY(${p.add(request.keys.map(countedKeyOf))}::text[]) AND ${column} > 0`,
      values: p.values,
    };
  }
  const where = whereClause(request, p);
  const columns = [...new Set(request.keys.map((key) => FACET_COLUMNS[key]))];
  const groups = request.keys.map((key) => {
    const column = FACET_COLUMNS[key];
    const name = p.add(key);
    return FACET_ARRAYS.has(key)
      ? `SELECT ${name}::text AS key, v AS value, count(*) AS count
         FROM matches, LATERAL (SELECT DISTINCT unnest(matches.${column})) u(v) GROUP BY v`
      : `SELECT ${name}::text AS key, ${column} AS value, count(*) AS count
         FROM matches GROUP BY ${column}`;
  });
  return {
    text: `WITH matches AS MATERIALIZED (SELECT ${columns.join(', ')} FROM portfolios WHERE ${where})
      ${groups.join('\n      UNION ALL ')}`,
    values: p.values,
  };
}

/** The rows of facetsStatement as the contract answers them. */
export function facetCounts(request: FacetRequest, rows: readonly FacetRow[]): FacetCounts {
  const counts: FacetCounts = {};
  const byCountedKey = new Map(request.keys.map((key) => [countedKeyOf(key), key] as const));
  for (const key of request.keys) counts[key] = new Map();
  for (const row of rows) {
    const key = byCountedKey.get(row.key) ?? (row.key as FacetKey);
    (counts[key] as Map<string, number>).set(row.value, Number(row.count));
  }
  return counts;
}
