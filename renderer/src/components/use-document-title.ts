import { useEffect } from 'react';

/** Each screen names itself in the window title, for tabs, history and screen readers. */
export function useDocumentTitle(title: string | undefined): void {
  useEffect(() => {
    document.title = title ? `${title} · Portfolio Manager` : 'Portfolio Manager';
  }, [title]);
}
