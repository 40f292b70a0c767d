import type { IpcMain, IpcMainInvokeEvent } from 'electron';
import type { DesktopApi } from '../../shared/desktop-bridge';
import { IPC_CHANNELS } from '../preload/ipc-channels';
import { isAppUrl } from './security';

/** The parts of an IPC event the sender check reads. */
export interface SenderEvent {
  sender: { id: number };
  senderFrame: { url: string; parent: unknown } | null;
}

/**
 * Whether an IPC message comes from the app itself: the top frame of one of our windows,
 * showing one of our origins. A page the window was tricked into showing, or a frame inside
 * the app's page, gets nothing (Electron's checklist: validate the sender of every message).
 */
export function isTrustedSender(
  event: SenderEvent,
  trustedWebContentsIds: ReadonlySet<number>,
  origins: readonly string[],
): boolean {
  const frame = event.senderFrame;
  if (!frame || frame.parent !== null) return false;
  if (!trustedWebContentsIds.has(event.sender.id)) return false;
  return isAppUrl(frame.url, origins);
}

export class UntrustedSenderError extends Error {
  override readonly name = 'UntrustedSenderError';
  constructor() {
    super('This window is not allowed to use the desktop API.');
  }
}

/** Main-side implementations of the preload API: each receives what the preload sent. */
export type DesktopHandlers = {
  [K in keyof DesktopApi]: (
    ...args: unknown[]
  ) => ReturnType<DesktopApi[K]> | Awaited<ReturnType<DesktopApi[K]>>;
};

export interface IpcRegistration {
  ipcMain: Pick<IpcMain, 'handle' | 'removeHandler'>;
  handlers: DesktopHandlers;
  trustedWebContentsIds: () => ReadonlySet<number>;
  origins: () => readonly string[];
}

/**
 * Registers one invoke handler per channel of the preload API, each behind the sender check.
 * Returns a function that removes them again.
 */
export function registerIpcHandlers(registration: IpcRegistration): () => void {
  const entries = Object.entries(IPC_CHANNELS) as [keyof DesktopApi, string][];
  for (const [name, channel] of entries) {
    const handler = registration.handlers[name];
    registration.ipcMain.handle(channel, async (event: IpcMainInvokeEvent, ...args: unknown[]) => {
      if (!isTrustedSender(event, registration.trustedWebContentsIds(), registration.origins())) {
        throw new UntrustedSenderError();
      }
      return handler(...args);
    });
  }
  return () => {
    for (const [, channel] of entries) registration.ipcMain.removeHandler(channel);
  };
}
