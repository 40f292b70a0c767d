/**
 * The list use case (DESIGN §4): who sees what (a viewer's scope), the parsed parameters, page
 * tokens bound to the query they page, the repository's page, and the items as `field` selects
 * them. The route only reads the query string and writes the answer (issue 25, point 6).
 */
import {
  COVER_SUBFIELDS,
  DEFAULT_LIST_FIELDS,
  LIST_FIELDS,
  type Actor,
  type FacetQuery,
  type FacetValue,
  type ListQuery,
  type PortfolioRecord,
  type Role,
} from '../../shared';
import {
  fieldTreeOf,
  listScope,
  pageSizeOf,
  parseFields,
  parseFilter,
  parseOrderBy,
  parseSearch,
  project,
  selects,
  type FieldTree,
  type FileDataReader,
  type ListScope,
} from '../domain/list-query';
import { facetAnswer, parseFacetKeys } from '../domain/facets';
import type { PageTokens } from '../domain/page-token';
import { coverFileView } from '../domain/portfolio-view';
import { Lru } from '../lib/lru';
import type { ListedKey, PortfolioRepository } from '../repositories/portfolio-repository-contract';

export type ListItem = Record<string, unknown>;

/** One page as the caller asked for it. */
export interface ListAnswer {
  /** The selected fields: which keys each item has (and which of its cover). */
  fields: FieldTree;
  lists: ListItem[];
  total: number;
  /** "" on the last page. */
  nextPageToken: string;
}

const DEFAULT_FIELDS = fieldTreeOf(DEFAULT_LIST_FIELDS);
const WHOLE_COVER = fieldTreeOf(['fileId', ...COVER_SUBFIELDS]);

/**
 * The items of a page for one field selection. Every list key but `cover` has the record's own
 * name and value, so without `cover` the records themselves are the items: the serializer's
 * schema names just the selected keys and reads nothing else (a page is up to 1000 records, and
 * copying them was a third of a list request). With `cover` each item is built; its `data`,
 * if selected, is what `readData` gives for the file (the route streams it from the blob store).
 */
function itemsOf(
  records: PortfolioRecord[],
  fields: FieldTree,
  readData: FileDataReader,
): ListItem[] {
  const cover = fields.cover;
  if (cover === undefined) return records;
  const keys = Object.keys(fields).filter((key) => key !== 'cover') as Array<keyof PortfolioRecord>;
  const withData = selects(fields, 'cover.data');
  return records.map((record) => {
    const item: ListItem = {};
    for (const key of keys) item[key] = record[key];
    if (!record.cover) {
      item.cover = null;
      return item;
    }
    const view = coverFileView(record.cover);
    if (!withData) {
      item.cover = cover === true ? view : project(view, cover);
      return item;
    }
    const data = readData(record.cover);
    item.cover = project({ ...view, data }, cover === true ? WHOLE_COVER : cover);
    return item;
  });
}

/** A `field` parameter parsed, with what the repository and the answer need of it. */
interface Selection {
  fields: FieldTree;
  /** Every list key but `cover` is the record's key of the same name (see itemsOf). */
  listed: ListedKey[];
}

export class PortfolioListing {
  /**
   * The parameters of the queries seen lately, parsed: a team's lists repeat a few orders,
   * filters and field selections in every combination, and parsing them again was about a tenth
   * of a list request's own work. Only what parsed is kept (a bad parameter throws its 400 every
   * time), and what is kept is never changed by a request.
   */
  private readonly scopes = new Lru<ListScope>(512);
  private readonly selections = new Lru<Selection>(64);

  constructor(
    private readonly repository: PortfolioRepository,
    private readonly tokens: PageTokens,
  ) {}

  /**
   * Changes whenever any list could answer differently (the repository's list version), or
   * undefined when the repository keeps none: then no answer may be reused.
   */
  version(): number | undefined {
    return this.repository.listVersion?.();
  }

  /** One page of what `caller` may see, as `query` asks (a bad parameter is a 400). */
  async list(caller: Actor, query: ListQuery, readData: FileDataReader): Promise<ListAnswer> {
    const scope = this.scope(query, caller.role);
    const { fields, listed } = this.selection(query.field);
    const after = query.pageToken ? this.tokens.decode(query.pageToken, scope) : null;
    const page = await this.repository.query({
      ...scope,
      after,
      limit: pageSizeOf(query.pageSize),
      fields: listed,
    });
    const lists = itemsOf(page.items, fields, readData);
    return {
      fields,
      lists,
      total: page.total,
      nextPageToken: page.next ? this.tokens.encode(page.next, scope) : '',
    };
  }

  /**
   * Facets (DESIGN §16): each value of the keys asked for, with how many of the portfolios the
   * list would answer for the same filter and search (and caller) have it.
   */
  async facets(caller: Actor, query: FacetQuery): Promise<Record<string, FacetValue[]>> {
    const keys = parseFacetKeys(query.keys);
    const scope = this.scope(query, caller.role);
    const counts = await this.repository.facets({ ...scope, keys });
    return facetAnswer(keys, counts);
  }

  /**
   * The ids of the first `limit` portfolios `caller` sees that `query` (its filter and q)
   * matches, in the list's default order, and how many match in all: a bulk edit's selection.
   */
  async matchingIds(
    caller: Actor,
    query: Pick<ListQuery, 'filter' | 'q'>,
    limit: number,
  ): Promise<{ ids: string[]; total: number }> {
    const scope = this.scope(query, caller.role);
    const page = await this.repository.query({
      ...scope,
      after: null,
      limit,
      fields: ['portfolioId'],
    });
    return { ids: page.items.map((item) => item.portfolioId), total: page.total };
  }

  private scope(query: Pick<ListQuery, 'orderBy' | 'filter' | 'q'>, role: Role): ListScope {
    const key = JSON.stringify([role, query.orderBy, query.filter, query.q]);
    let scope = this.scopes.use(key);
    if (scope === undefined) {
      const search = parseSearch(query.q);
      scope = listScope(
        parseOrderBy(query.orderBy, search !== null),
        parseFilter(query.filter, role),
        role === 'viewer',
        search,
      );
      this.scopes.put(key, scope);
    }
    return scope;
  }

  private selection(raw: string | undefined): Selection {
    const key = raw ?? '';
    let selection = this.selections.use(key);
    if (selection === undefined) {
      const fields = parseFields(raw, LIST_FIELDS) ?? DEFAULT_FIELDS;
      const listed = Object.keys(fields) as ListedKey[];
      selection = { fields, listed };
      this.selections.put(key, selection);
    }
    return selection;
  }
}
