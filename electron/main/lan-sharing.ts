import {
  LAN_PORT_MAX,
  LAN_PORT_MIN,
  isValidLanPort,
  type LanAddress,
  type LanSharingRequest,
  type LanStatus,
} from '../../shared/desktop-bridge';
import { listLanAddresses } from './lan-addresses';
import type { ServerHost } from './server-host';
import type { SettingsStore } from './settings-store';

type LanHost = Pick<ServerHost, 'shareOnLan' | 'stopLanSharing' | 'lanPort'>;

const PORT_MESSAGE = `The port must be a whole number from ${LAN_PORT_MIN} to ${LAN_PORT_MAX}.`;

/** What the renderer sent, checked: IPC arguments are untrusted input like any request body. */
export function parseLanRequest(value: unknown): LanSharingRequest | null {
  if (typeof value !== 'object' || value === null) return null;
  const { enabled, port } = value as Record<string, unknown>;
  if (typeof enabled !== 'boolean' || typeof port !== 'number') return null;
  return { enabled, port };
}

/**
 * The "Share on LAN" setting: applies the owner's choice to the server host, remembers it, and
 * reports the state with the addresses to open from other computers.
 */
export class LanSharing {
  private error: string | null = null;

  constructor(
    private readonly host: LanHost,
    private readonly settings: SettingsStore,
    private readonly addresses: (port: number) => LanAddress[] = listLanAddresses,
  ) {}

  status(): LanStatus {
    const saved = this.settings.get().lanSharing;
    const listeningPort = this.host.lanPort;
    return {
      enabled: saved.enabled,
      port: listeningPort ?? saved.port,
      listening: listeningPort !== null,
      addresses: listeningPort === null ? [] : this.addresses(listeningPort),
      error: this.error,
    };
  }

  /** At start-up: share again when the owner left sharing on. A failure is shown, not fatal. */
  async restore(): Promise<LanStatus> {
    const saved = this.settings.get().lanSharing;
    if (saved.enabled) await this.apply(saved.port);
    return this.status();
  }

  /**
   * Turns sharing on or off. The choice is saved only once it took effect, so a taken port
   * neither sticks in the settings nor changes what is running.
   */
  async set(request: unknown): Promise<LanStatus> {
    const parsed = parseLanRequest(request);
    if (!parsed) throw new TypeError('setLanSharing expects { enabled: boolean, port: number }.');
    if (parsed.enabled) {
      if (!isValidLanPort(parsed.port)) {
        this.error = PORT_MESSAGE;
        return this.status();
      }
      if (!(await this.apply(parsed.port))) return this.status();
      await this.settings.update((draft) => {
        draft.lanSharing = { enabled: true, port: parsed.port };
      });
    } else {
      await this.host.stopLanSharing();
      this.error = null;
      await this.settings.update((draft) => {
        draft.lanSharing.enabled = false;
        if (isValidLanPort(parsed.port)) draft.lanSharing.port = parsed.port;
      });
    }
    return this.status();
  }

  private async apply(port: number): Promise<boolean> {
    try {
      await this.host.shareOnLan(port);
      this.error = null;
      return true;
    } catch (error) {
      this.error = error instanceof Error ? error.message : String(error);
      return false;
    }
  }
}
