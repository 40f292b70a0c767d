import { ORDER_KEYS, type OrderKey } from '../../../shared';

/** What the gallery shows, as kept in the URL so a view can be bookmarked and shared. */
export interface GalleryView {
  q: string;
  category: string;
  memberBarcode: string;
  readyToBuy: string;
  staffPick: TriState;
  published: TriState;
  active: TriState;
  sort: string;
}

export type TriState = '' | 'true' | 'false';

export const DEFAULT_SORT = 'createdTime-';

const SORT_LABELS: Record<OrderKey, [ascending: string, descending: string]> = {
  createdTime: ['Oldest first', 'Newest first'],
  modifiedTime: ['Least recently changed', 'Recently changed'],
  projectTitle: ['Title A–Z', 'Title Z–A'],
  category: ['Category A–Z', 'Category Z–A'],
  staffPick: ['Staff picks last', 'Staff picks first'],
};

/** Every orderBy key in both directions (`key-` is descending, DESIGN §4). */
export const SORT_OPTIONS = ORDER_KEYS.flatMap((key) => [
  { value: `${key}-`, label: SORT_LABELS[key][1] },
  { value: key, label: SORT_LABELS[key][0] },
]);

const TEXT_KEYS = ['q', 'category', 'memberBarcode', 'readyToBuy'] as const;
const TRI_KEYS = ['staffPick', 'published', 'active'] as const;

function triState(value: string | null): TriState {
  return value === 'true' || value === 'false' ? value : '';
}

export function viewFromSearch(search: URLSearchParams): GalleryView {
  const sort = search.get('sort') ?? DEFAULT_SORT;
  return {
    q: search.get('q') ?? '',
    category: search.get('category') ?? '',
    memberBarcode: search.get('memberBarcode') ?? '',
    readyToBuy: search.get('readyToBuy') ?? '',
    staffPick: triState(search.get('staffPick')),
    published: triState(search.get('published')),
    active: triState(search.get('active')),
    sort: SORT_OPTIONS.some((option) => option.value === sort) ? sort : DEFAULT_SORT,
  };
}

/** The URL form of a view; defaults are left out so plain links stay plain. */
export function searchFromView(view: GalleryView): URLSearchParams {
  const search = new URLSearchParams();
  for (const key of TEXT_KEYS) if (view[key].trim()) search.set(key, view[key].trim());
  for (const key of TRI_KEYS) if (view[key]) search.set(key, view[key]);
  if (view.sort !== DEFAULT_SORT) search.set('sort', view.sort);
  return search;
}

export function hasFilters(view: GalleryView): boolean {
  return [...TEXT_KEYS, ...TRI_KEYS].some((key) => view[key].trim() !== '');
}

/**
 * How many filters besides the search box are set (shown on the phone's Filters button).
 * Published and active count only for staff: viewers neither see nor send them.
 */
export function moreFilterCount(view: GalleryView, staff: boolean): number {
  const shown = (key: (typeof TEXT_KEYS)[number] | (typeof TRI_KEYS)[number]) =>
    key !== 'q' && (staff || (key !== 'published' && key !== 'active'));
  return [...TEXT_KEYS, ...TRI_KEYS].filter((key) => shown(key) && view[key].trim() !== '').length;
}

/** `\` and `,` are escaped inside a filter value (DESIGN §4). */
export function escapeFilterValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/,/g, '\\,');
}

/** The longest `q` the list endpoint takes; a longer text is cut there. */
const MAX_SEARCH_LENGTH = 200;
const HAS_WORD = /[\p{L}\p{N}]/u;

/**
 * The list endpoint's orderBy, q and filter for a view. The search box is the full-text `q`
 * (sent only once it holds a letter or digit: punctuation alone is no search). Published/active
 * filters are only sent for staff: viewers see published, active portfolios anyway and may not
 * filter on them.
 */
export function listParamsOf(
  view: GalleryView,
  staff: boolean,
): { orderBy: string; filter?: string; q?: string } {
  const pairs: [string, string][] = [];
  if (view.category.trim()) pairs.push(['category', view.category.trim()]);
  if (view.memberBarcode.trim()) pairs.push(['memberBarcode', view.memberBarcode.trim()]);
  if (view.readyToBuy.trim()) pairs.push(['readyToBuy', view.readyToBuy.trim()]);
  if (view.staffPick) pairs.push(['staffPick', view.staffPick]);
  if (staff && view.published) pairs.push(['published', view.published]);
  if (staff && view.active) pairs.push(['active', view.active]);
  const filter = pairs.map(([key, value]) => `${key}:${escapeFilterValue(value)}`).join(',');
  const q = view.q.trim().slice(0, MAX_SEARCH_LENGTH);
  return {
    orderBy: view.sort,
    ...(filter ? { filter } : {}),
    ...(HAS_WORD.test(q) ? { q } : {}),
  };
}
