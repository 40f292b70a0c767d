import DOMPurify from 'dompurify';
import { useMemo } from 'react';

/**
 * certificateDesc is sanitized by the server before it is stored; it is sanitized again right
 * before rendering because the renderer trusts no stored HTML (DESIGN §3). Inline styles are
 * dropped too: the app's CSP would refuse them anyway.
 */
export function sanitizeHtml(html: string): string {
  return DOMPurify.sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS: [
      'style',
      'form',
      'input',
      'button',
      'textarea',
      'select',
      'iframe',
      'object',
      'embed',
    ],
    FORBID_ATTR: ['style'],
  });
}

export function SanitizedHtml({
  html,
  className,
  label,
}: {
  html: string;
  className?: string;
  label?: string;
}) {
  const clean = useMemo(() => sanitizeHtml(html), [html]);
  return (
    <div
      className={`rich-text ${className ?? ''}`}
      aria-label={label}
      dangerouslySetInnerHTML={{ __html: clean }}
    />
  );
}
