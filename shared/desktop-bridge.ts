import type { Session } from './schemas/session';

/**
 * The contract between the desktop shell and the renderer: what the preload exposes as
 * `window.desktop`. The Electron main process implements it, the preload forwards it over IPC
 * (electron/preload/ipc-channels.ts), the renderer calls it; all three compile this one file,
 * so they cannot drift.
 */

/** A session of the local owner, opened by the shell without a password. */
export type DesktopSession = Session & { username: string };

export interface ServerInfo {
  /** Where the window loads the UI from, e.g. http://127.0.0.1:53124. */
  origin: string;
  /** The folder holding the database and the files. */
  dataDir: string;
  /** The local owner's account (an admin), e.g. to set its password. */
  ownerUsername: string;
}

export interface LanAddress {
  /** The network interface, e.g. "eth0" or "Wi-Fi". */
  interfaceName: string;
  address: string;
  /** What to open from another computer, e.g. http://192.168.1.20:8080/. */
  url: string;
}

export interface LanStatus {
  /** The saved choice: share on the LAN when the app starts. */
  enabled: boolean;
  /** The chosen port (also remembered while sharing is off). */
  port: number;
  /** Whether the server is accepting LAN connections right now. */
  listening: boolean;
  /** Addresses other computers can use; empty while not listening. */
  addresses: LanAddress[];
  /** Why sharing is not on although it was asked for (e.g. the port is taken). */
  error: string | null;
}

export interface LanSharingRequest {
  enabled: boolean;
  /** 1024..65535. */
  port: number;
}

export interface AppVersions {
  app: string;
  electron: string;
  chrome: string;
  node: string;
}

export interface DesktopApi {
  /** A valid session of the local owner; a fresh one when the previous has ended. */
  getSession(): Promise<DesktopSession | null>;
  getServerInfo(): Promise<ServerInfo>;
  getLanStatus(): Promise<LanStatus>;
  /** Turns LAN sharing on (on `port`) or off, and remembers the choice. */
  setLanSharing(request: LanSharingRequest): Promise<LanStatus>;
  /** Opens the data folder in the system file manager. */
  openDataFolder(): Promise<void>;
  /** The app's version and the runtimes it is built on. */
  getVersions(): Promise<AppVersions>;
}

/** Lowest and highest port the LAN listener accepts (ports below 1024 need root). */
export const LAN_PORT_MIN = 1024;
export const LAN_PORT_MAX = 65535;
export const DEFAULT_LAN_PORT = 8080;

export function isValidLanPort(port: unknown): port is number {
  return (
    typeof port === 'number' &&
    Number.isInteger(port) &&
    port >= LAN_PORT_MIN &&
    port <= LAN_PORT_MAX
  );
}
