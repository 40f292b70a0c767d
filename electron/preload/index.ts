import { contextBridge, ipcRenderer } from 'electron';
import type { DesktopApi, LanSharingRequest } from '../../shared/desktop-bridge';
import { IPC_CHANNELS } from './ipc-channels';

/**
 * The whole bridge: named functions, each invoking one fixed channel with plain data. The
 * renderer never sees ipcRenderer, so it cannot send on other channels or listen to any.
 */
const desktop: DesktopApi = {
  getSession: () => ipcRenderer.invoke(IPC_CHANNELS.getSession),
  getServerInfo: () => ipcRenderer.invoke(IPC_CHANNELS.getServerInfo),
  getLanStatus: () => ipcRenderer.invoke(IPC_CHANNELS.getLanStatus),
  setLanSharing: (request: LanSharingRequest) =>
    // Copy the two fields: whatever else the caller put on the object stays on this side.
    ipcRenderer.invoke(IPC_CHANNELS.setLanSharing, {
      enabled: request.enabled,
      port: request.port,
    }),
  openDataFolder: () => ipcRenderer.invoke(IPC_CHANNELS.openDataFolder),
  getVersions: () => ipcRenderer.invoke(IPC_CHANNELS.getVersions),
};

contextBridge.exposeInMainWorld('desktop', desktop);
