import type { App, BrowserWindow } from 'electron';

type InstanceApp = Pick<App, 'requestSingleInstanceLock' | 'on'>;

/**
 * Single instance: two processes would fight over one data directory (the second would only
 * get the "in use" error). The second launch hands over to the first, which comes forward.
 */
export function claimSingleInstance(app: InstanceApp, onSecondInstance: () => void): boolean {
  if (!app.requestSingleInstanceLock()) return false;
  app.on('second-instance', () => onSecondInstance());
  return true;
}

type FocusableWindow = Pick<
  BrowserWindow,
  'isMinimized' | 'restore' | 'show' | 'focus' | 'isDestroyed'
>;

export function bringToFront(window: FocusableWindow | null): boolean {
  if (!window || window.isDestroyed()) return false;
  if (window.isMinimized()) window.restore();
  window.show();
  window.focus();
  return true;
}

type QuitApp = Pick<App, 'on' | 'quit'>;

/**
 * Quit only after `shutdown` has finished: the first will-quit (all windows are closed by then,
 * so their last settings writes are queued) is held back while the server flushes its writes
 * and releases the data directory, then the app quits for real. A failing shutdown is reported
 * and the app still quits: an app that cannot be closed is worse.
 */
export function quitAfterShutdown(
  app: QuitApp,
  shutdown: () => Promise<void>,
  onError: (error: unknown) => void,
): void {
  let state: 'running' | 'stopping' | 'stopped' = 'running';
  app.on('will-quit', (event) => {
    if (state === 'stopped') return;
    event.preventDefault();
    if (state === 'stopping') return;
    state = 'stopping';
    void shutdown()
      .catch(onError)
      .finally(() => {
        state = 'stopped';
        app.quit();
      });
  });
}
