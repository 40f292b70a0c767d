import sanitize from 'sanitize-html';

/** The allow-list for certificateDesc: simple formatting and safe links, nothing executable. */
const OPTIONS: sanitize.IOptions = {
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
};

export function sanitizeHtml(html: string): string {
  return sanitize(html, OPTIONS);
}
