import { type ReactNode, useCallback, useEffect, useMemo, useState } from 'react';
import {
  type Toast,
  type ToastAction,
  type ToastApi,
  ToastContext,
  type ToastKind,
} from './toast-context';

const LIFETIME_MS: Record<ToastKind, number> = { success: 4000, info: 5000, error: 8000 };
/** A toast with an action (Undo) stays longer: reaching it by keyboard takes a moment. */
const ACTION_LIFETIME_MS = 10_000;

let nextId = 1;

export function ToastProvider({ children }: { children: ReactNode }) {
  const [toasts, setToasts] = useState<Toast[]>([]);

  const dismiss = useCallback((id: number) => {
    setToasts((current) => current.filter((toast) => toast.id !== id));
  }, []);

  const push = useCallback((kind: ToastKind, message: string, action?: ToastAction) => {
    const id = nextId++;
    setToasts((current) => [...current.slice(-4), { id, kind, message, action }]);
  }, []);

  const api = useMemo<ToastApi>(
    () => ({
      success: (message, action) => push('success', message, action),
      error: (message) => push('error', message),
      info: (message, action) => push('info', message, action),
    }),
    [push],
  );

  return (
    <ToastContext.Provider value={api}>
      {children}
      {/* Two live regions: errors interrupt a screen reader, the rest wait their turn. */}
      <div className="toasts" aria-live="polite">
        {toasts
          .filter((toast) => toast.kind !== 'error')
          .map((toast) => (
            <ToastItem key={toast.id} toast={toast} onDismiss={dismiss} />
          ))}
      </div>
      <div className="toasts toasts--errors" aria-live="assertive">
        {toasts
          .filter((toast) => toast.kind === 'error')
          .map((toast) => (
            <ToastItem key={toast.id} toast={toast} onDismiss={dismiss} />
          ))}
      </div>
    </ToastContext.Provider>
  );
}

/** Disappears after its lifetime, which starts over while the pointer or focus is on it. */
function ToastItem({ toast, onDismiss }: { toast: Toast; onDismiss(id: number): void }) {
  const [held, setHeld] = useState({ pointer: false, focus: false });
  const paused = held.pointer || held.focus;
  useEffect(() => {
    if (paused) return;
    const lifetime = toast.action ? ACTION_LIFETIME_MS : LIFETIME_MS[toast.kind];
    const timer = window.setTimeout(() => onDismiss(toast.id), lifetime);
    return () => window.clearTimeout(timer);
  }, [paused, toast, onDismiss]);

  return (
    <div
      className={`toast toast--${toast.kind}`}
      onPointerEnter={() => setHeld((h) => ({ ...h, pointer: true }))}
      onPointerLeave={() => setHeld((h) => ({ ...h, pointer: false }))}
      onFocus={() => setHeld((h) => ({ ...h, focus: true }))}
      onBlur={(event) => {
        if (!event.currentTarget.contains(event.relatedTarget))
          setHeld((h) => ({ ...h, focus: false }));
      }}
    >
      <span className="toast-message">{toast.message}</span>
      {toast.action && (
        <button
          type="button"
          className="toast-action"
          onClick={() => {
            onDismiss(toast.id);
            toast.action?.run();
          }}
        >
          {toast.action.label}
        </button>
      )}
      <button
        type="button"
        className="icon-button"
        aria-label="Dismiss notification"
        onClick={() => onDismiss(toast.id)}
      >
        ×
      </button>
    </div>
  );
}
