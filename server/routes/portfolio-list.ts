import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import {
  COVER_SUBFIELDS,
  DEFAULT_LIST_FIELDS,
  LIST_FIELDS,
  ListItemSchema,
  ListQuerySchema,
  ListResponseSchema,
  type ListQuery,
  type ListResponse,
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
import { coverFileView } from '../domain/portfolio-view';
import { InlineData, sendWithInlineData } from '../http/inline-data-response';
import { errors, json } from '../openapi/responses';
import { caller } from '../plugins/auth';
import { ListPageCache } from '../repositories/list-page-cache';
import type { ListedKey } from '../repositories/portfolio-repository-contract';
import { Lru } from '../lib/lru';

type Item = Record<string, unknown>;

const DEFAULT_FIELDS = fieldTreeOf(DEFAULT_LIST_FIELDS);
const WHOLE_COVER = fieldTreeOf(['fileId', ...COVER_SUBFIELDS]);

/**
 * The items of a page for one field selection. Every list key but `cover` has the record's own
 * name and value, so without `cover` the records themselves are the items: the serializer's
 * schema names just the selected keys and reads nothing else (a page is up to 1000 records, and
 * copying them was a third of a list request). With `cover` each item is built; its `data`,
 * if selected, is a placeholder that the response streams from the blob store.
 */
function itemsOf(records: PortfolioRecord[], fields: FieldTree, readData: FileDataReader): Item[] {
  const cover = fields.cover;
  if (cover === undefined) return records;
  const keys = Object.keys(fields).filter((key) => key !== 'cover') as Array<keyof PortfolioRecord>;
  const withData = selects(fields, 'cover.data');
  return records.map((record) => {
    const item: Item = {};
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

type Serialize = (response: ListResponse) => string;

/**
 * One compiled serializer per set of top-level keys: ListResponseSchema with its items narrowed
 * to those keys (the selection's sub-fields of `cover` are already applied to the items).
 */
function serializers() {
  const compiled = new Lru<Serialize>(32);
  return (reply: FastifyReply, fields: FieldTree): Serialize => {
    // In the schema's order, as the route's own serializer writes them.
    const keys = Object.keys(ListItemSchema.properties).filter((name) => name in fields) as Array<
      keyof typeof ListItemSchema.properties
    >;
    const key = keys.join(',');
    let serialize = compiled.use(key);
    if (serialize === undefined) {
      const schema = Type.Object({
        ...ListResponseSchema.properties,
        lists: Type.Array(Type.Pick(ListItemSchema, keys)),
      });
      serialize = reply.compileSerializationSchema(schema) as Serialize;
      compiled.put(key, serialize);
    }
    return serialize;
  };
}

/** A `field` parameter parsed, with what the repository and the answer need of it. */
interface Selection {
  fields: FieldTree;
  /** Every list key but `cover` is the record's key of the same name (see itemsOf). */
  listed: ListedKey[];
}

/**
 * The parameters of the queries seen lately, parsed: a team's lists repeat a few orders, filters
 * and field selections in every combination, and parsing them again was about a tenth of the
 * route's own work. Only what parsed is kept (a bad parameter throws its 400 every time), and
 * what is kept is never changed by a request.
 */
function parsedQueries() {
  const scopes = new Lru<ListScope>(512);
  const selections = new Lru<Selection>(64);
  return {
    scope(query: ListQuery, role: Role): ListScope {
      const key = JSON.stringify([role, query.orderBy, query.filter, query.q]);
      let scope = scopes.use(key);
      if (scope === undefined) {
        const search = parseSearch(query.q);
        scope = listScope(
          parseOrderBy(query.orderBy, search !== null),
          parseFilter(query.filter, role),
          role === 'viewer',
          search,
        );
        scopes.put(key, scope);
      }
      return scope;
    },
    selection(raw: string | undefined): Selection {
      const key = raw ?? '';
      let selection = selections.use(key);
      if (selection === undefined) {
        const fields = parseFields(raw, LIST_FIELDS) ?? DEFAULT_FIELDS;
        const listed = Object.keys(fields) as ListedKey[];
        selection = { fields, listed };
        selections.put(key, selection);
      }
      return selection;
    },
  };
}

/** GET /api/v1/portfolio: sorted, filtered, keyset-paged list (DESIGN §4). */
export default async function portfolioListRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSession);
  // The repository answers lists from its one index (the embedded one keeps it in memory).
  const portfolios = app.portfolios;
  // After listening, so that building the search index never delays the first answers.
  app.addHook('onListen', async () => portfolios.prepareListIndex?.());
  const tokens = app.pageTokens;
  const cache = new ListPageCache(app.config.listCacheBytes);
  const parsed = parsedQueries();
  const serializerFor = serializers();

  app.get<{ Querystring: ListQuery }>(
    '/api/v1/portfolio',
    {
      schema: {
        operationId: 'listPortfolios',
        tags: ['portfolios'],
        security: [{ session: [] }],
        summary: 'List portfolios',
        description:
          '`result` counts the items on this page, `total` the portfolios matching the filter; ' +
          '`nextPageToken` is "" on the last page. Ties in orderBy are broken by portfolioId. ' +
          '`q` searches the text fields (every word, as a prefix, case and accents ignored). ' +
          'Viewers see only published, active portfolios.',
        querystring: ListQuerySchema,
        response: {
          200: json(ListResponseSchema, 'One page of portfolios'),
          ...errors('INVALID_QUERY', 'INVALID_PAGE_TOKEN', 'RESPONSE_TOO_LARGE'),
        },
      },
    },
    async (request, reply): Promise<Buffer | FastifyReply> => {
      const { user } = caller(request);
      const visibleOnly = user.role === 'viewer';
      // The exact query string (valid, or validation would have answered 400) and what the
      // caller may see decide the answer, along with the data: see ListPageCache.
      const cacheKey = `${visibleOnly ? 'viewer' : 'staff'} ${request.url}`;
      const version = portfolios.listVersion?.();
      reply.type('application/json; charset=utf-8');
      if (version !== undefined) {
        const cached = cache.get(cacheKey, version);
        if (cached !== undefined) return cached;
      }

      const query = request.query;
      const scope = parsed.scope(query, user.role);
      const { fields, listed } = parsed.selection(query.field);
      const after = query.pageToken ? tokens.decode(query.pageToken, scope) : null;
      const page = await portfolios.query({
        ...scope,
        after,
        limit: pageSizeOf(query.pageSize),
        fields: listed,
      });
      const inline = new InlineData();
      const lists = itemsOf(page.items, fields, inline.placeholder);
      const json = serializerFor(
        reply,
        fields,
      )({
        lists,
        result: lists.length,
        total: page.total,
        nextPageToken: page.next ? tokens.encode(page.next, scope) : '',
      });
      // Cover data is streamed from the blob store, and never cached: it is the large part.
      if (!inline.isEmpty) {
        const limitBytes = app.config.limits.inlineBytes;
        return sendWithInlineData(reply, json, inline, { blobs: app.blobStore, limitBytes });
      }
      // As bytes: the serializer's string is a rope of many pieces, and a socket write of a rope
      // walks it piece by piece on every send (that was half the time of a cached answer).
      const body = Buffer.from(json);
      if (version !== undefined) cache.put(cacheKey, version, body);
      return body;
    },
  );
}
