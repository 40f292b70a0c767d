import { ApiError } from '../errors';
import type { Caller, PortfolioService } from '../services/portfolio-service';
import type { StoredPortfolio } from '../repositories/portfolio-repository-contract';
import type { GalleryQuery } from './links';
import {
  CARD_FIELDS,
  isPublic,
  publicCardOf,
  publicViewOf,
  type PublicCard,
  type PublicView,
  type PublicViewOptions,
} from './public-view';

/**
 * A visitor reads as a viewer does: only published and active portfolios exist for it (DESIGN
 * §2), through the same service and visibility rule as the API.
 */
const VISITOR: Caller = { username: '', role: 'viewer', allowEdit: [] };

/** Cards on one gallery page. */
export const GALLERY_PAGE_SIZE = 24;
/** Portfolios in the feeds (the newest). */
export const FEED_SIZE = 20;
/** Portfolios in the sitemap (the newest); a sitemap holds at most 50,000. */
export const SITEMAP_SIZE = 5000;
/** How many of the newest portfolios the gallery's category and tag navigation is made of. */
const NAVIGATION_SAMPLE = 1000;

/** A value inside the list's `filter` (DESIGN §4): a comma and a backslash escaped. */
function filterValue(value: string): string {
  return value.replace(/[\\,]/g, (char) => `\\${char}`);
}

const noData = () => {
  throw new Error('the showcase never asks for file data');
};

export interface GalleryAnswer {
  cards: PublicCard[];
  total: number;
  next: string;
}

/** What the showcase reads: public portfolios only, as public views (DESIGN §15). */
export class ShowcaseCatalogue {
  constructor(private readonly portfolios: PortfolioService) {}

  /** One gallery page; null for a page token that is not one of this list's. */
  async gallery(query: GalleryQuery, staffPicksFirst: boolean): Promise<GalleryAnswer | null> {
    const filter = [
      ...(query.category ? [`category:${filterValue(query.category)}`] : []),
      ...(query.tag ? [`relativeCategory:${filterValue(query.tag)}`] : []),
    ].join(',');
    try {
      const answer = await this.portfolios.listing.list(
        VISITOR,
        {
          orderBy: staffPicksFirst ? 'staffPick-,createdTime-' : 'createdTime-',
          ...(filter && { filter }),
          ...(query.q && { q: query.q }),
          ...(query.after && { pageToken: query.after }),
          pageSize: GALLERY_PAGE_SIZE,
          field: CARD_FIELDS,
        },
        noData,
      );
      return {
        cards: answer.lists.map(publicCardOf),
        total: answer.total,
        next: answer.nextPageToken,
      };
    } catch (error) {
      if (error instanceof ApiError && error.statusCode === 400) return null;
      throw error;
    }
  }

  /** The categories and related categories of the newest public work, sorted. */
  async navigation(): Promise<{ categories: string[]; tags: string[] }> {
    const answer = await this.portfolios.listing.list(
      VISITOR,
      { orderBy: 'createdTime-', pageSize: NAVIGATION_SAMPLE, field: 'category,relativeCategory' },
      noData,
    );
    const categories = new Set<string>();
    const tags = new Set<string>();
    for (const item of answer.lists) {
      categories.add(String(item.category));
      for (const tag of (item.relativeCategory as string[] | undefined) ?? []) tags.add(tag);
    }
    const sorted = (values: Set<string>) =>
      [...values].sort((a, b) => a.localeCompare(b, 'en', { sensitivity: 'base' }));
    return { categories: sorted(categories), tags: sorted(tags) };
  }

  /** The ids of the newest public work, newest first. */
  async newestIds(limit: number): Promise<string[]> {
    const ids: string[] = [];
    let pageToken = '';
    do {
      const answer = await this.portfolios.listing.list(
        VISITOR,
        {
          orderBy: 'createdTime-',
          pageSize: Math.min(1000, limit - ids.length),
          field: 'portfolioId',
          ...(pageToken && { pageToken }),
        },
        noData,
      );
      for (const item of answer.lists) ids.push(String(item.portfolioId));
      pageToken = answer.nextPageToken;
    } while (pageToken && ids.length < limit);
    return ids;
  }

  /** The stored record of a public portfolio, or null (unknown, unpublished, inactive alike). */
  async record(portfolioId: string): Promise<StoredPortfolio | null> {
    try {
      const record = await this.portfolios.get(VISITOR, portfolioId);
      return isPublic(record) ? record : null;
    } catch (error) {
      if (error instanceof ApiError && error.statusCode === 404) return null;
      throw error;
    }
  }

  async view(portfolioId: string, options: PublicViewOptions): Promise<PublicView | null> {
    const record = await this.record(portfolioId);
    return record && publicViewOf(record, options);
  }

  /** Public views of the newest work, for the feeds. */
  async newest(limit: number, options: PublicViewOptions): Promise<PublicView[]> {
    const views = await Promise.all(
      (await this.newestIds(limit)).map((id) => this.view(id, options)),
    );
    return views.filter((view): view is PublicView => view !== null);
  }
}
