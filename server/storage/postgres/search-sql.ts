import type { PortfolioRecord } from '../../../shared';
import { searchWords } from '../../domain/search-text';
import { wordsOf } from '../embedded/portfolio-search';

/**
 * Full-text `q` in SQL, answering exactly what the embedded search answers (docs/API.md, "Search
 * on PostgreSQL"). A portfolio's words are made by the embedded index's own functions and stored
 * as ` word word … ` (see migration 0002); a term is made of letters and digits only (parseSearch),
 * so a LIKE pattern of it needs no escaping and `% t%` can only match at the start of a word.
 */

/** A set of words as stored: every word once, each with a space before and after. */
const spaced = (words: Iterable<string>): string => ` ${[...words].join(' ')} `;

/** The search columns of a live record. */
export function searchColumns(record: PortfolioRecord): {
  search_words: string;
  title_words: string;
} {
  return {
    search_words: spaced(wordsOf(record)),
    title_words: spaced(new Set(searchWords(record.projectTitle))),
  };
}

/** Placeholders: adds a value and answers its `$n`. */
type Add = (value: unknown) => string;

/** Every term begins some word of the searched fields (the embedded `matchesAllTerms`). */
export function searchCondition(terms: readonly string[], add: Add): string {
  return terms.map((term) => `search_words LIKE ${add(`% ${term}%`)}`).join(' AND ');
}

/**
 * The embedded relevance score (server/repositories/portfolio-search.ts), term by term: a whole
 * word of the title 4, the start of a title word 2, a whole word elsewhere 1, else (the start of
 * a word elsewhere, as every match has) 0.5. Sums of halves are exact in double precision, so
 * equal scores are equal in both backends and ties fall to portfolioId alike.
 */
export function scoreExpression(terms: readonly string[], add: Add): string {
  return terms
    .map((term) => {
      const word = add(`% ${term} %`);
      const prefix = add(`% ${term}%`);
      return `(CASE WHEN title_words LIKE ${word} THEN 4 WHEN title_words LIKE ${prefix} THEN 2
        WHEN search_words LIKE ${word} THEN 1 ELSE 0.5 END)::float8`;
    })
    .join(' + ');
}
