import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import {
  COVER_SUBFIELDS,
  DEFAULT_LIST_FIELDS,
  errorResponses,
  LIST_FIELDS,
  ListItemSchema,
  ListQuerySchema,
  ListResponseSchema,
  type ListQuery,
  type ListResponse,
  type PortfolioRecord,
} from '../../shared';
import {
  fieldTreeOf,
  fileDataReader,
  listScope,
  pageSizeOf,
  parseFields,
  parseFilter,
  parseOrderBy,
  project,
  selects,
  type FieldTree,
  type FileDataReader,
} from '../domain/list-query';
import { PageTokens } from '../domain/page-token';
import { coverFileView } from '../domain/portfolio-view';
import { caller } from '../plugins/auth';
import { ListPageCache } from '../repositories/list-page-cache';
import { Lru } from '../repositories/lru';
import { PortfolioIndex } from '../repositories/portfolio-index';

type Item = Record<string, unknown>;

const DEFAULT_FIELDS = fieldTreeOf(DEFAULT_LIST_FIELDS);
const WHOLE_COVER = fieldTreeOf(['fileId', ...COVER_SUBFIELDS]);

/**
 * The items of a page for one field selection. Every list key but `cover` has the record's own
 * name and value, so without `cover` the records themselves are the items: the serializer's
 * schema names just the selected keys and reads nothing else (a page is up to 1000 records, and
 * copying them was a third of a list request). With `cover` each item is built; only an item
 * whose cover bytes must be read costs a promise.
 */
function itemsOf(
  records: PortfolioRecord[],
  fields: FieldTree,
  readData: FileDataReader,
): Item[] | Promise<Item[]> {
  const cover = fields.cover;
  if (cover === undefined) return records;
  const keys = Object.keys(fields).filter((key) => key !== 'cover') as Array<keyof PortfolioRecord>;
  const withData = selects(fields, 'cover.data');
  const pending: Array<Promise<unknown>> = [];
  const items = records.map((record) => {
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
    pending.push(
      readData(record.cover).then((data) => {
        item.cover = project({ ...view, data }, cover === true ? WHOLE_COVER : cover);
      }),
    );
    return item;
  });
  return pending.length === 0 ? items : Promise.all(pending).then(() => items);
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

/** GET /api/v1/portfolio: sorted, filtered, keyset-paged list (DESIGN §4). */
export default async function portfolioListRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSession);
  const index = new PortfolioIndex(app.store.collection('portfolios'), app.store);
  const tokens = await PageTokens.open(app.store);
  const readData = fileDataReader(app);
  const cache = new ListPageCache(app.config.listCacheBytes);
  const serializerFor = serializers();

  app.get<{ Querystring: ListQuery }>(
    '/api/v1/portfolio',
    {
      schema: {
        tags: ['portfolios'],
        security: [{ session: [] }],
        summary: 'List portfolios',
        description:
          '`result` counts the items on this page, `total` the portfolios matching the filter; ' +
          '`nextPageToken` is "" on the last page. Ties in orderBy are broken by portfolioId. ' +
          'Viewers see only published, active portfolios.',
        querystring: ListQuerySchema,
        response: { 200: ListResponseSchema, ...errorResponses(400, 401) },
      },
    },
    async (request, reply): Promise<Buffer> => {
      const { user } = caller(request);
      const visibleOnly = user.role === 'viewer';
      // The exact query string (valid, or validation would have answered 400) and what the
      // caller may see decide the answer, along with the data: see ListPageCache.
      const cacheKey = `${visibleOnly ? 'viewer' : 'staff'} ${request.url}`;
      const version = index.version;
      reply.type('application/json; charset=utf-8');
      const cached = cache.get(cacheKey, version);
      if (cached !== undefined) return cached;

      const query = request.query;
      const scope = listScope(
        parseOrderBy(query.orderBy),
        parseFilter(query.filter, user.role),
        visibleOnly,
      );
      const fields = parseFields(query.field, LIST_FIELDS) ?? DEFAULT_FIELDS;
      const after = query.pageToken ? tokens.decode(query.pageToken, scope) : null;
      const page = index.query({ ...scope, after, limit: pageSizeOf(query.pageSize) });
      const lists = await itemsOf(page.items, fields, readData);
      const json = serializerFor(
        reply,
        fields,
      )({
        lists,
        result: lists.length,
        total: page.total,
        nextPageToken: page.next ? tokens.encode(page.next, scope) : '',
      });
      // As bytes: the serializer's string is a rope of many pieces, and a socket write of a rope
      // walks it piece by piece on every send (that was half the time of a cached answer).
      const body = Buffer.from(json);
      // Stamped with the version read before the page: a change while cover data was being
      // read makes this entry stale at once rather than serving a mix.
      cache.put(cacheKey, version, body);
      return body;
    },
  );
}
