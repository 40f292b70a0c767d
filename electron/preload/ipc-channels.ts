import type { DesktopApi } from '../../shared/desktop-bridge';

/**
 * IPC channel per bridge function; main registers exactly these, the preload invokes exactly
 * these. No Node or Electron imports: the sandboxed preload bundles this file.
 */
export const IPC_CHANNELS = {
  getSession: 'desktop:get-session',
  getServerInfo: 'desktop:get-server-info',
  getLanStatus: 'desktop:get-lan-status',
  setLanSharing: 'desktop:set-lan-sharing',
  openDataFolder: 'desktop:open-data-folder',
  getVersions: 'desktop:get-versions',
} as const satisfies Record<keyof DesktopApi, string>;
