import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { etagMatches } from '../media/conditional-get';
import { contentDisposition, downloadName } from '../media/file-names';
import {
  DERIVATIVE_TYPES,
  derivativeFormats,
  widthsFor,
  type DerivativeFormat,
} from './derivatives';
import { jsonFeed, rssFeed, sitemap } from './feeds';
import { serverLinks, type GalleryQuery } from './links';
import {
  GalleryPage,
  NotFoundPage,
  renderPage,
  renderPortfolioPage,
  type PageOptions,
} from './pages';
import { publicDocumentFile, publicImageFile } from './public-view';
import { FEED_SIZE, SITEMAP_SIZE } from './showcase-catalogue';
import type { ShowcaseSettings } from './showcase-settings';
import { SHOWCASE_CSS } from './styles';

export interface ShowcaseRouteOptions {
  /** Requests per minute one client address may make here. */
  requestsPerMinute: number;
}

/**
 * Strict: nothing runs, nothing loads from elsewhere, no inline style; forms only back here.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "img-src 'self'",
  "style-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Every answer revalidates, so an unpublished portfolio is never served from a cache. */
const REVALIDATE = 'no-cache';

/** What a portfolio id can be (shared/schemas/common.ts Identifier); anything else is a 404. */
const PORTFOLIO_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const FILE_ID = /^[A-Za-z0-9-]{1,64}$/;
const DERIVATIVE_NAME = /^(\d{1,5})\.(avif|webp)$/;

const OFF_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>Not found</title></head><body><h1>Not found</h1><p>There is nothing here.</p></body></html>`;

function textParam(query: unknown, key: string, max: number): string | undefined {
  const value = (query as Record<string, unknown> | undefined)?.[key];
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim().slice(0, max);
  return trimmed || undefined;
}

function etagOf(body: string | Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
}

/** Sends `body` with an ETag of its content (pages and feeds depend on the settings too). */
function sendRevalidated(
  request: FastifyRequest,
  reply: FastifyReply,
  type: string,
  body: string | Buffer,
  cacheControl = REVALIDATE,
) {
  const etag = etagOf(body);
  reply.header('etag', etag).header('cache-control', cacheControl).type(type);
  if (etagMatches(request.headers['if-none-match'], etag)) return reply.status(304).send();
  return reply.send(body);
}

/** The public showcase's pages, feeds and images (DESIGN §15). No session is read or set. */
export default async function showcaseRoutes(app: FastifyInstance, options: ShowcaseRouteOptions) {
  const { settings: settingsStore, catalogue, derivatives } = app.showcase;
  const formats = derivativeFormats();
  const fallback = formats.at(-1)!;
  const routeConfig = {
    config: { rateLimit: { max: options.requestsPerMinute, timeWindow: '1 minute' } },
    schema: { hide: true },
  };

  app.addHook('onSend', async (_request, reply, payload) => {
    reply.removeHeader('set-cookie');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('x-content-type-options', 'nosniff');
    if (!reply.hasHeader('content-security-policy'))
      reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
    return payload;
  });

  const pageOptions = (request: FastifyRequest, settings: ShowcaseSettings): PageOptions => ({
    settings,
    links: serverLinks(`${request.protocol}://${request.host}`),
    formats,
  });

  /** The settings, or null once the 404 of a showcase that is off has been sent. */
  async function enabled(reply: FastifyReply): Promise<ShowcaseSettings | null> {
    const settings = await settingsStore.get();
    if (settings.enabled) return settings;
    await reply
      .status(404)
      .header('cache-control', REVALIDATE)
      .type('text/html; charset=utf-8')
      .send(OFF_PAGE);
    return null;
  }

  function notFound(request: FastifyRequest, reply: FastifyReply, settings: ShowcaseSettings) {
    return reply
      .status(404)
      .header('cache-control', REVALIDATE)
      .type('text/html; charset=utf-8')
      .send(renderPage(<NotFoundPage options={pageOptions(request, settings)} />));
  }

  async function gallery(request: FastifyRequest, reply: FastifyReply) {
    const settings = await enabled(reply);
    if (!settings) return reply;
    const query: GalleryQuery = {
      q: textParam(request.query, 'q', 200),
      category: textParam(request.query, 'category', 100),
      tag: textParam(request.query, 'tag', 100),
      after: textParam(request.query, 'after', 2000),
    };
    const [answer, navigation] = await Promise.all([
      catalogue.gallery(query, settings.staffPicksFirst),
      catalogue.navigation(),
    ]);
    if (!answer) return notFound(request, reply, settings);
    const html = renderPage(
      <GalleryPage
        options={pageOptions(request, settings)}
        query={query}
        {...answer}
        {...navigation}
      />,
    );
    return sendRevalidated(request, reply, 'text/html; charset=utf-8', html);
  }

  app.get('/showcase', routeConfig, gallery);

  app.get<{ Params: { portfolioId: string } }>(
    '/showcase/:portfolioId',
    routeConfig,
    async (request, reply) => {
      const settings = await enabled(reply);
      if (!settings) return reply;
      const { portfolioId } = request.params;
      const view = PORTFOLIO_ID.test(portfolioId)
        ? await catalogue.view(portfolioId, settings)
        : null;
      if (!view) return notFound(request, reply, settings);
      const html = renderPortfolioPage(view, pageOptions(request, settings));
      return sendRevalidated(request, reply, 'text/html; charset=utf-8', html);
    },
  );

  app.get('/showcase/feed.json', routeConfig, async (request, reply) => {
    const settings = await enabled(reply);
    if (!settings) return reply;
    const views = await catalogue.newest(FEED_SIZE, settings);
    const { links } = pageOptions(request, settings);
    const body = jsonFeed(views, { settings, links, imageFormat: fallback });
    return sendRevalidated(request, reply, 'application/feed+json; charset=utf-8', body);
  });

  app.get('/showcase/rss.xml', routeConfig, async (request, reply) => {
    const settings = await enabled(reply);
    if (!settings) return reply;
    const views = await catalogue.newest(FEED_SIZE, settings);
    const { links } = pageOptions(request, settings);
    const body = rssFeed(views, { settings, links, imageFormat: fallback });
    return sendRevalidated(request, reply, 'application/rss+xml; charset=utf-8', body);
  });

  app.get('/showcase/sitemap.xml', routeConfig, async (request, reply) => {
    const settings = await enabled(reply);
    if (!settings) return reply;
    const ids = await catalogue.newestIds(SITEMAP_SIZE);
    const body = sitemap(ids, pageOptions(request, settings).links);
    return sendRevalidated(request, reply, 'application/xml; charset=utf-8', body);
  });

  app.get('/showcase/assets/showcase.css', routeConfig, async (request, reply) => {
    const settings = await enabled(reply);
    if (!settings) return reply;
    return sendRevalidated(
      request,
      reply,
      'text/css; charset=utf-8',
      SHOWCASE_CSS,
      'public, max-age=3600',
    );
  });

  app.get('/showcase/assets/logo', routeConfig, async (request, reply) => {
    const settings = await enabled(reply);
    if (!settings) return reply;
    if (!settings.logo) return notFound(request, reply, settings);
    return sendRevalidated(
      request,
      reply,
      settings.logo.mimeType,
      Buffer.from(settings.logo.data, 'base64'),
    );
  });

  app.get<{ Params: { portfolioId: string; fileId: string; name: string } }>(
    '/showcase/media/:portfolioId/:fileId/:name',
    routeConfig,
    async (request, reply) => {
      const settings = await enabled(reply);
      if (!settings) return reply;
      const { portfolioId, fileId, name } = request.params;
      const record =
        PORTFOLIO_ID.test(portfolioId) && FILE_ID.test(fileId)
          ? await catalogue.record(portfolioId)
          : null;
      const file = record && publicImageFile(record, fileId);
      if (!file) return notFound(request, reply, settings);

      if (name === 'original') {
        if (!settings.publicOriginals) return notFound(request, reply, settings);
        return sendFile(
          request,
          reply,
          app.blobStore.pathOf(file.sha256),
          file.mimeType,
          `"${file.md5Checksum}"`,
        );
      }
      const match = DERIVATIVE_NAME.exec(name);
      const width = Number(match?.[1]);
      const format = match?.[2] as DerivativeFormat | undefined;
      if (!format || !formats.includes(format) || !widthsFor(file.dimention!.width).includes(width))
        return notFound(request, reply, settings);
      const path = await derivatives.get(file.sha256, width, format);
      return sendFile(
        request,
        reply,
        path,
        DERIVATIVE_TYPES[format],
        `"${file.sha256.slice(0, 32)}-${width}-${format}"`,
      );
    },
  );

  app.get<{ Params: { portfolioId: string; fileId: string } }>(
    '/showcase/files/:portfolioId/:fileId',
    routeConfig,
    async (request, reply) => {
      const settings = await enabled(reply);
      if (!settings) return reply;
      const { portfolioId, fileId } = request.params;
      const record =
        PORTFOLIO_ID.test(portfolioId) && FILE_ID.test(fileId)
          ? await catalogue.record(portfolioId)
          : null;
      const file = record && publicDocumentFile(record, fileId, settings);
      if (!file) return notFound(request, reply, settings);
      reply
        .header('content-security-policy', 'sandbox')
        .header(
          'content-disposition',
          contentDisposition(
            'attachment',
            downloadName(file.originalFilename, file.fullFileExtension),
          ),
        );
      return sendFile(
        request,
        reply,
        app.blobStore.pathOf(file.sha256),
        file.mimeType,
        `"${file.md5Checksum}"`,
      );
    },
  );

  // Anything else under /showcase, path tricks included, is the one 404 page.
  app.get('/showcase/*', routeConfig, async (request, reply) => {
    if ((request.params as { '*': string })['*'] === '') return gallery(request, reply);
    const settings = await enabled(reply);
    if (!settings) return reply;
    return notFound(request, reply, settings);
  });
}

async function sendFile(
  request: FastifyRequest,
  reply: FastifyReply,
  path: string,
  type: string,
  etag: string,
) {
  reply.header('etag', etag).header('cache-control', REVALIDATE).type(type);
  if (etagMatches(request.headers['if-none-match'], etag)) return reply.status(304).send();
  const { size } = await stat(path);
  return reply.header('content-length', size).send(createReadStream(path));
}
