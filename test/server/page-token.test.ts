import { describe, expect, it } from 'vitest';
import { listScope, parseFilter, parseOrderBy } from '../../server/domain/list-query';
import { PageTokens } from '../../server/domain/page-token';

/** A fixed secret, so that tokens made by earlier code can be written down here. */
const SECRET = Buffer.alloc(32, 7).toString('base64');

const staffScope = listScope(
  parseOrderBy('projectTitle-,createdTime'),
  parseFilter('category:Interior,staffPick:true', 'admin'),
  false,
);
const viewerSearch = listScope(parseOrderBy(undefined), parseFilter(undefined, 'viewer'), true, [
  'lake',
  'ho',
]);

/**
 * Made by the code of 2026-11-23 (before the key object and the one-shot scope hash). The staff
 * token was made again on 2026-11-27: the category filter now ignores case (DESIGN §16), so its
 * scope holds `interior`, and a token of a category-filtered list made before that is refused as
 * another query's (the list then starts again from its first page).
 */
const ISSUED = {
  staff:
    'eyJ2IjoxLCJzIjoiVWpVdERNRUplZDdLZGZPUyIsImMiOlsibGFrZSBob3VzZVx1MDAwMExha2UgaG91c2UiLDE3MDAwMDAwMDAwMDAsInAwMSJdfQ.r-QA7c5yg15I53DZ9eHTVQ',
  viewer:
    'eyJ2IjoxLCJzIjoiZGR0MDVmdWJOUEM1eTBuYSIsImMiOlsxNzAwMDAwMDAwMDAwLCJwMDIiXX0.22wU1UCVA1m0av8vhpSZ3g',
};

describe('page tokens', () => {
  const tokens = PageTokens.withSecret(SECRET);

  it('issued by earlier code still decode, and are what this code issues', () => {
    const staffCursor = { values: ['lake house\u0000Lake house', 1_700_000_000_000], id: 'p01' };
    const viewerCursor = { values: [1_700_000_000_000], id: 'p02' };
    expect(tokens.decode(ISSUED.staff, staffScope)).toEqual(staffCursor);
    expect(tokens.decode(ISSUED.viewer, viewerSearch)).toEqual(viewerCursor);
    expect(tokens.encode(staffCursor, staffScope)).toBe(ISSUED.staff);
    expect(tokens.encode(viewerCursor, viewerSearch)).toBe(ISSUED.viewer);
  });

  it('refuse another secret, an altered body or MAC, and another scope', () => {
    const other = PageTokens.withSecret(Buffer.alloc(32, 8).toString('base64'));
    const refusal = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return (error as Error).message;
      }
      return 'accepted';
    };
    expect(refusal(() => other.decode(ISSUED.staff, staffScope))).toMatch(/altered/);
    const [body, mac] = ISSUED.staff.split('.') as [string, string];
    const flipped = `${body}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`;
    expect(refusal(() => tokens.decode(flipped, staffScope))).toMatch(/altered/);
    expect(refusal(() => tokens.decode(`${body.slice(0, -2)}.${mac}`, staffScope))).toMatch(
      /altered/,
    );
    expect(refusal(() => tokens.decode(`${body}.${mac}AA`, staffScope))).toMatch(/altered/);
    expect(refusal(() => tokens.decode(ISSUED.staff, viewerSearch))).toMatch(/another query/);
  });
});
