import { createRequire } from 'node:module';
import type Sanitize from 'sanitize-html';

const requireCjs = createRequire(import.meta.url);

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

let loaded: { sanitize: typeof Sanitize; options: Sanitize.IOptions } | undefined;

export function sanitizeHtml(html: string): string {
  // Loaded on first use (it brings an HTML parser and PostCSS): starts do not wait for it.
  if (!loaded) {
    const sanitize = requireCjs('sanitize-html') as typeof Sanitize;
    loaded = { sanitize, options: options(sanitize) };
  }
  return loaded.sanitize(html, loaded.options);
}
