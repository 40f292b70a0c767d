import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { searchWords } from '../../server/domain/search-text';

/** The words as the Unicode rules define them (docs/API.md, `q`), with no shortcut. */
const unicodeWords = (text: string) =>
  text
    .toLowerCase()
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '');

describe('searchWords', () => {
  it('finds the same words in ASCII text as the Unicode rules (its shortcut changes nothing)', () => {
    const ascii = fc.string({
      unit: fc.integer({ min: 0, max: 127 }).map((code) => String.fromCharCode(code)),
      maxLength: 60,
    });
    fc.assert(
      fc.property(ascii, (text) => {
        expect(searchWords(text)).toEqual(unicodeWords(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('folds case and accents in other text', () => {
    expect(searchWords('Café LUMIÈRE, Ärger-straße 12')).toEqual([
      'cafe',
      'lumiere',
      'arger',
      'straße',
      '12',
    ]);
    const any = fc.string({ unit: 'grapheme', maxLength: 30 });
    fc.assert(
      fc.property(any, (text) => {
        expect(searchWords(text)).toEqual(unicodeWords(text));
      }),
      { numRuns: 1000 },
    );
  });
});
