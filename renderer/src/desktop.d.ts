/**
 * `window.desktop`, exposed by the Electron preload. Its one definition is
 * electron/preload/api.ts; this file only puts it on `Window`. Optional: in a browser on the
 * LAN there is no desktop shell, and the renderer must work without it.
 */
import type { DesktopApi } from '../../electron/preload/api';

export type {
  AppVersions,
  DesktopApi,
  DesktopSession,
  LanAddress,
  LanSharingRequest,
  LanStatus,
  ServerInfo,
} from '../../electron/preload/api';

declare global {
  interface Window {
    desktop?: DesktopApi;
  }
}
