import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import {
  FacetQuerySchema,
  FacetsResponseSchema,
  ListItemSchema,
  ListQuerySchema,
  ListResponseSchema,
  type FacetQuery,
  type FacetsResponse,
  type ListQuery,
  type ListResponse,
} from '../../shared';
import type { FieldTree } from '../domain/list-query';
import { InlineData, sendWithInlineData } from '../http/inline-data-response';
import { Lru } from '../lib/lru';
import { errors, json } from '../openapi/responses';
import { caller } from '../plugins/auth';
import { ListPageCache } from '../repositories/list-page-cache';

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
  // The repository answers lists from its one index (the embedded one keeps it in memory).
  // After listening, so that building the search index never delays the first answers.
  app.addHook('onListen', async () => app.portfolios.prepareListIndex?.());
  const listing = app.portfolioService.listing;
  const cache = new ListPageCache(app.config.listCacheBytes);
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
      const user = caller(request).user;
      // The exact query string (valid, or validation would have answered 400) and what the
      // caller may see decide the answer, along with the data: see ListPageCache.
      const cacheKey = `${user.role === 'viewer' ? 'viewer' : 'staff'} ${request.url}`;
      const version = listing.version();
      reply.type('application/json; charset=utf-8');
      if (version !== undefined) {
        const cached = cache.get(cacheKey, version);
        if (cached !== undefined) return cached;
      }

      const inline = new InlineData();
      const page = await listing.list(user, request.query, inline.placeholder);
      const json = serializerFor(
        reply,
        page.fields,
      )({
        lists: page.lists,
        result: page.lists.length,
        total: page.total,
        nextPageToken: page.nextPageToken,
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

  app.get<{ Querystring: FacetQuery }>(
    '/api/v1/portfolio/facets',
    {
      schema: {
        operationId: 'portfolioFacets',
        tags: ['portfolios'],
        security: [{ session: [] }],
        summary: 'Count the values of portfolio fields',
        description:
          'For each key in `keys` (all of them when not given), the values the portfolios ' +
          'matching `filter` and `q` have (as the list matches them), each with how many have ' +
          'it: the most used first, then by value. Viewers count only published, active ' +
          'portfolios. A category is one value whatever its case (shown as its most used ' +
          'spelling); empty values are left out.',
        querystring: FacetQuerySchema,
        response: {
          200: json(FacetsResponseSchema, 'The values of each key, with their counts'),
          ...errors('INVALID_QUERY'),
        },
      },
    },
    async (request): Promise<FacetsResponse> => ({
      facets: await listing.facets(caller(request).user, request.query),
    }),
  );
}
