import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SORT,
  SORT_OPTIONS,
  escapeFilterValue,
  listParamsOf,
  moreFilterCount,
  searchFromView,
  viewFromSearch,
} from '../../renderer/src/gallery/gallery-view';
import { ORDER_KEYS } from '../../shared';

describe('gallery view in the URL', () => {
  it('round-trips a bookmarked view and leaves defaults out of the URL', () => {
    const view = viewFromSearch(
      new URLSearchParams('q=tea&category=Tableware&staffPick=true&sort=projectTitle'),
    );
    expect(view).toMatchObject({
      q: 'tea',
      category: 'Tableware',
      staffPick: 'true',
      sort: 'projectTitle',
    });
    expect(searchFromView(view).toString()).toBe(
      'q=tea&category=Tableware&staffPick=true&sort=projectTitle',
    );
    expect(searchFromView(viewFromSearch(new URLSearchParams())).toString()).toBe('');
  });

  it('falls back to the default sort for an unknown sort key in a hand-edited URL', () => {
    expect(viewFromSearch(new URLSearchParams('sort=price')).sort).toBe(DEFAULT_SORT);
    expect(viewFromSearch(new URLSearchParams('staffPick=maybe')).staffPick).toBe('');
  });

  it("counts the filters set besides the title search, for the phone's Filters button", () => {
    const count = (query: string, staff = true) =>
      moreFilterCount(viewFromSearch(new URLSearchParams(query)), staff);
    expect(count('q=tea&sort=projectTitle')).toBe(0);
    expect(count('category=Tableware&staffPick=false&active=true&q=tea')).toBe(3);
    expect(count('memberBarcode=%20%20')).toBe(0); // blank is not set
    // A viewer's shared link may say active=true: viewers have no such filter to show.
    expect(count('category=Tableware&published=false&active=true', false)).toBe(1);
  });

  it('offers every orderBy key in both directions', () => {
    const values = SORT_OPTIONS.map((option) => option.value);
    for (const key of ORDER_KEYS) expect(values).toEqual(expect.arrayContaining([key, `${key}-`]));
  });
});

describe('list parameters', () => {
  it('builds the filter with escaped commas and backslashes', () => {
    expect(escapeFilterValue('a,b\\c')).toBe('a\\,b\\\\c');
    const view = viewFromSearch(new URLSearchParams('q=Cups, mugs&readyToBuy=yes'));
    expect(listParamsOf(view, false)).toEqual({
      orderBy: DEFAULT_SORT,
      filter: 'readyToBuy:yes',
      q: 'Cups, mugs',
    });
    const commas = viewFromSearch(new URLSearchParams('memberBarcode=a,b\\c'));
    expect(listParamsOf(commas, false).filter).toBe('memberBarcode:a\\,b\\\\c');
  });

  it('sends the search box as q, only when it holds a word, at most 200 characters', () => {
    const search = (q: string) => listParamsOf(viewFromSearch(new URLSearchParams({ q })), false).q;
    expect(search('  lake house ')).toBe('lake house');
    expect(search('?!')).toBeUndefined();
    expect(search('a'.repeat(300))).toHaveLength(200);
  });

  it('sends published/active filters only for staff', () => {
    const view = viewFromSearch(new URLSearchParams('published=false&active=true'));
    expect(listParamsOf(view, true).filter).toBe('published:false,active:true');
    expect(listParamsOf(view, false)).toEqual({ orderBy: DEFAULT_SORT });
  });
});
