/**
 * Words of free text as full-text search sees them, for both the indexed portfolios and `q`:
 * split at anything that is not a letter or a digit, accents removed (NFD, then the combining
 * marks dropped), lower case. One function for both sides keeps "Café" and "cafe" the same word.
 */
const NON_WORD = /[^\p{L}\p{N}]+/u;
const COMBINING_MARKS = /\p{M}/gu;

/** Lower case first: some capitals (İ) lower-case to a letter plus a combining mark. */
const fold = (text: string) => text.toLowerCase().normalize('NFD').replace(COMBINING_MARKS, '');

/** Plain ASCII: the same words without the Unicode passes (most text, and the build's cost). */
const ASCII = /^[\p{ASCII}]*$/u;
const ASCII_NON_WORD = /[^a-z0-9]+/;

export function searchWords(text: string): string[] {
  const words = ASCII.test(text)
    ? text.toLowerCase().split(ASCII_NON_WORD)
    : fold(text).split(NON_WORD);
  return words.filter((word) => word !== '');
}

/**
 * Does a portfolio whose words are `words` match every term of a query? A term matches a word it
 * begins (prefix search); every term must match some word.
 */
export function matchesAllTerms(words: ReadonlySet<string>, terms: readonly string[]): boolean {
  return terms.every((term) => {
    if (words.has(term)) return true;
    for (const word of words) if (word.startsWith(term)) return true;
    return false;
  });
}
