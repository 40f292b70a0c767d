/**
 * `window.desktop`, exposed by the Electron preload. Its one definition is
 * shared/desktop-bridge.ts; this file only puts it on `Window`. Optional: in a browser on the
 * LAN there is no desktop shell, and the renderer must work without it.
 */
import type { DesktopApi } from '../../shared/desktop-bridge';

export type {
  AppVersions,
  DesktopApi,
  DesktopSession,
  LanAddress,
  LanSharingRequest,
  LanStatus,
  ServerInfo,
} from '../../shared/desktop-bridge';

declare global {
  interface Window {
    desktop?: DesktopApi;
  }
}
