import { createContext } from 'react';

export type ToastKind = 'success' | 'error' | 'info';

/** A button in the toast, e.g. "Undo"; running it dismisses the toast. */
export interface ToastAction {
  label: string;
  run(): void;
}

export interface Toast {
  id: number;
  kind: ToastKind;
  message: string;
  action?: ToastAction;
}

export interface ToastApi {
  success(message: string, action?: ToastAction): void;
  error(message: string): void;
  info(message: string, action?: ToastAction): void;
}

export const ToastContext = createContext<ToastApi | null>(null);
