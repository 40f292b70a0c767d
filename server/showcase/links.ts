import type { DerivativeFormat } from './derivatives';

/** What the gallery lists: a search, a category or a related category, a page. */
export interface GalleryQuery {
  q?: string;
  category?: string;
  tag?: string;
  /** The list's page token of this page; absent on the first. */
  after?: string;
}

/**
 * Where each showcase page, feed and file is. The server's links are paths under /showcase; a
 * static export (DESIGN §15) can give relative ones instead, so the pages do not care.
 */
export interface ShowcaseLinks {
  gallery(query?: GalleryQuery): string;
  portfolio(portfolioId: string): string;
  stylesheet(): string;
  logo(): string;
  image(portfolioId: string, fileId: string, width: number, format: DerivativeFormat): string;
  original(portfolioId: string, fileId: string): string;
  document(portfolioId: string, fileId: string): string;
  jsonFeed(): string;
  rss(): string;
  sitemap(): string;
  /** An absolute URL of a link above (Open Graph, feeds and sitemaps need them). */
  absolute(href: string): string;
}

const at = encodeURIComponent;

/** Links of the running server, absolute under `origin` (e.g. "https://example.org"). */
export function serverLinks(origin: string): ShowcaseLinks {
  return {
    gallery(query = {}) {
      const params = new URLSearchParams();
      for (const key of ['q', 'category', 'tag', 'after'] as const) {
        const value = query[key];
        if (value) params.set(key, value);
      }
      const search = params.toString();
      return search ? `/showcase?${search}` : '/showcase';
    },
    portfolio: (portfolioId) => `/showcase/${at(portfolioId)}`,
    stylesheet: () => '/showcase/assets/showcase.css',
    logo: () => '/showcase/assets/logo',
    image: (portfolioId, fileId, width, format) =>
      `/showcase/media/${at(portfolioId)}/${at(fileId)}/${width}.${format}`,
    original: (portfolioId, fileId) => `/showcase/media/${at(portfolioId)}/${at(fileId)}/original`,
    document: (portfolioId, fileId) => `/showcase/files/${at(portfolioId)}/${at(fileId)}`,
    jsonFeed: () => '/showcase/feed.json',
    rss: () => '/showcase/rss.xml',
    sitemap: () => '/showcase/sitemap.xml',
    absolute: (href) => new URL(href, origin).href,
  };
}
