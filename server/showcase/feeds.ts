/** The showcase's feeds and sitemap (DESIGN §15): JSON Feed 1.1, RSS 2.0, sitemaps.org 0.9. */
import { widthsFor, type DerivativeFormat } from './derivatives';
import type { ShowcaseLinks } from './links';
import { summaryOf } from './pages';
import type { PublicView } from './public-view';
import type { ShowcaseSettings } from './showcase-settings';

export interface FeedOptions {
  settings: Pick<ShowcaseSettings, 'title' | 'intro'>;
  links: ShowcaseLinks;
  /** The format every reader can show (the last derivative format). */
  imageFormat: DerivativeFormat;
}

function imageUrl(view: PublicView, options: FeedOptions): string | undefined {
  if (!view.cover) return undefined;
  const { links } = options;
  const width = widthsFor(view.cover.width).at(-1)!;
  return links.absolute(
    links.image(view.portfolioId, view.cover.fileId, width, options.imageFormat),
  );
}

export function jsonFeed(views: PublicView[], options: FeedOptions): string {
  const { links, settings } = options;
  return JSON.stringify({
    version: 'https://jsonfeed.org/version/1.1',
    title: settings.title,
    home_page_url: links.absolute(links.gallery()),
    feed_url: links.absolute(links.jsonFeed()),
    ...(settings.intro && { description: settings.intro }),
    language: 'en',
    items: views.map((view) => ({
      id: links.absolute(links.portfolio(view.portfolioId)),
      url: links.absolute(links.portfolio(view.portfolioId)),
      title: view.projectTitle,
      content_text: [view.aboutProject, view.projectDetail].filter(Boolean).join('\n\n'),
      summary: summaryOf(view),
      ...(view.cover && { image: imageUrl(view, options) }),
      tags: [view.category, ...view.relativeCategory, ...view.generalTag],
    })),
  });
}

const XML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
};

/** Text for XML, with the characters XML 1.0 cannot hold at all left out. */
export function xmlText(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/[&<>"']/g, (char) => XML_ESCAPES[char]!);
}

export function rssFeed(views: PublicView[], options: FeedOptions): string {
  const { links, settings } = options;
  const items = views
    .map((view) => {
      const url = xmlText(links.absolute(links.portfolio(view.portfolioId)));
      const image = imageUrl(view, options);
      return [
        '<item>',
        `<title>${xmlText(view.projectTitle)}</title>`,
        `<link>${url}</link>`,
        `<guid isPermaLink="true">${url}</guid>`,
        `<description>${xmlText(summaryOf(view, 500))}</description>`,
        `<category>${xmlText(view.category)}</category>`,
        image
          ? `<enclosure url="${xmlText(image)}" length="0" type="image/${options.imageFormat}"/>`
          : '',
        '</item>',
      ].join('');
    })
    .join('\n');
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">',
    '<channel>',
    `<title>${xmlText(settings.title)}</title>`,
    `<link>${xmlText(links.absolute(links.gallery()))}</link>`,
    `<description>${xmlText(settings.intro || settings.title)}</description>`,
    `<atom:link href="${xmlText(links.absolute(links.rss()))}" rel="self" type="application/rss+xml"/>`,
    items,
    '</channel>',
    '</rss>',
    '',
  ].join('\n');
}

export function sitemap(portfolioIds: string[], links: ShowcaseLinks): string {
  const urls = [links.gallery(), ...portfolioIds.map((id) => links.portfolio(id))];
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
    ...urls.map((url) => `<url><loc>${xmlText(links.absolute(url))}</loc></url>`),
    '</urlset>',
    '',
  ].join('\n');
}
