import { type RefObject, useEffect } from 'react';

/** Whether a key pressed with this target in focus is someone typing. */
function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || target.closest('input, textarea, select') !== null;
}

/**
 * `/` puts the caret in `target` (a search box), as on most sites with one; never while the
 * user types in a field, with a modifier held, or with a dialog open over the page.
 */
export function useSlashToFocus(target: RefObject<HTMLInputElement | null>): void {
  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key !== '/' || event.ctrlKey || event.metaKey || event.altKey) return;
      if (event.defaultPrevented || event.isComposing || isTyping(event.target)) return;
      if (document.querySelector('dialog[open]')) return;
      const input = target.current;
      if (!input) return;
      event.preventDefault();
      input.focus();
      input.select();
    };
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  }, [target]);
}
