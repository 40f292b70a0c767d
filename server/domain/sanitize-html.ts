import type Sanitize from 'sanitize-html';
import { lazyRequire } from '../lazy-require';

/** Loaded on first use: it brings an HTML parser and PostCSS. */
const loadSanitize = lazyRequire<typeof Sanitize>('sanitize-html');

/** The allow-list for certificateDesc: simple formatting and safe links, nothing executable. */
const options = (sanitize: typeof Sanitize): Sanitize.IOptions => ({
  allowedTags: [
    'p',
    'br',
    'strong',
    'b',
    'em',
    'i',
    'u',
    's',
    'ul',
    'ol',
    'li',
    'a',
    'h3',
    'h4',
    'blockquote',
    'span',
  ],
  // rel and target are set by transformTags (which runs before attribute filtering).
  allowedAttributes: { a: ['href', 'title', 'rel', 'target'] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  transformTags: {
    a: sanitize.simpleTransform('a', { rel: 'noopener noreferrer', target: '_blank' }),
  },
});

let allowList: Sanitize.IOptions | undefined;

export function sanitizeHtml(html: string): string {
  const sanitize = loadSanitize();
  return sanitize(html, (allowList ??= options(sanitize)));
}

/** The text of an HTML fragment, without any markup: for print, where no HTML is shown. */
export function plainTextOf(html: string): string {
  const text = loadSanitize()(html.replace(/<\/(p|li|h3|h4|blockquote)>|<br\s*\/?>/gi, '$&\n'), {
    allowedTags: [],
    allowedAttributes: {},
  });
  return text
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
