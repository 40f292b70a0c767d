import { useEffect, useRef } from 'react';

/**
 * Keeps a native <dialog> shown as a modal while `open` is true. showModal() gives focus
 * trapping, an inert page behind and Escape handling without any library.
 */
export function useModalDialog(open: boolean) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return ref;
}
