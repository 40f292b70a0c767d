import type { FastifyInstance } from 'fastify';
import {
  COVER_SUBFIELDS,
  DEFAULT_LIST_FIELDS,
  errorResponses,
  LIST_FIELDS,
  ListQuerySchema,
  ListResponseSchema,
  type ListQuery,
  type ListResponse,
  type PortfolioRecord,
} from '../../shared';
import {
  fieldTreeOf,
  fileDataReader,
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
import { PortfolioIndex } from '../repositories/portfolio-index';

type Item = Record<string, unknown>;

const DEFAULT_FIELDS = fieldTreeOf(DEFAULT_LIST_FIELDS);
const WHOLE_COVER = fieldTreeOf(['fileId', ...COVER_SUBFIELDS]);

/**
 * Builds list items straight from records: every list key but `cover` has the record's own name
 * and value, so an item is a few property copies (this runs up to 1000 times per request). Only
 * an item whose cover bytes must be read costs a promise.
 */
function itemBuilder(fields: FieldTree, readData: FileDataReader) {
  const keys = Object.keys(fields).filter((key) => key !== 'cover') as Array<keyof PortfolioRecord>;
  const cover = fields.cover;
  const withData = selects(fields, 'cover.data');
  return (record: PortfolioRecord): Item | Promise<Item> => {
    const item: Item = {};
    for (const key of keys) item[key] = record[key];
    if (cover === undefined) return item;
    if (!record.cover) {
      item.cover = null;
      return item;
    }
    const view = coverFileView(record.cover);
    if (!withData) {
      item.cover = cover === true ? view : project(view, cover);
      return item;
    }
    return readData(record.cover).then((data) => {
      item.cover = project({ ...view, data }, cover === true ? WHOLE_COVER : cover);
      return item;
    });
  };
}

/** GET /api/v1/portfolio: sorted, filtered, keyset-paged list (DESIGN §4). */
export default async function portfolioListRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSession);
  const index = new PortfolioIndex(app.portfolioRepository.all(), app.store);
  const tokens = await PageTokens.open(app.store);
  const readData = fileDataReader(app);

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
    async (request): Promise<ListResponse> => {
      const { user } = caller(request);
      const query = request.query;
      const scope = {
        order: parseOrderBy(query.orderBy),
        filter: parseFilter(query.filter, user.role),
        visibleOnly: user.role === 'viewer',
      };
      const fields = parseFields(query.field, LIST_FIELDS) ?? DEFAULT_FIELDS;
      const after = query.pageToken ? tokens.decode(query.pageToken, scope) : null;
      const page = index.query({ ...scope, after, limit: pageSizeOf(query.pageSize) });
      const built = page.items.map(itemBuilder(fields, readData));
      const lists = built.some((item) => item instanceof Promise)
        ? await Promise.all(built)
        : (built as Item[]);
      return {
        lists,
        result: lists.length,
        total: page.total,
        nextPageToken: page.next ? tokens.encode(page.next, scope) : '',
      };
    },
  );
}
