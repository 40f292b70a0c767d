import { mkdir, readFile, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { SerialQueue } from '../../server/lib/serial-queue';
import { writeFileDurably } from '../../server/storage/durable-file';
import { DEFAULT_LAN_PORT, isValidLanPort } from '../../shared/desktop-bridge';

export interface WindowBounds {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface DesktopSettings {
  version: 1;
  lanSharing: { enabled: boolean; port: number };
  window: { bounds: WindowBounds | null; maximized: boolean };
}

export function defaultSettings(): DesktopSettings {
  return {
    version: 1,
    // Off by default: the server is reachable from other machines only when the owner says so.
    lanSharing: { enabled: false, port: DEFAULT_LAN_PORT },
    window: { bounds: null, maximized: false },
  };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function parseBounds(value: unknown): WindowBounds | null {
  if (!isObject(value)) return null;
  const { x, y, width, height } = value;
  const numbers = [x, y, width, height];
  if (!numbers.every((n) => typeof n === 'number' && Number.isFinite(n))) return null;
  if ((width as number) <= 0 || (height as number) <= 0) return null;
  return { x: x as number, y: y as number, width: width as number, height: height as number };
}

/**
 * Reads what it can and defaults the rest, field by field: a settings file edited by hand or
 * written by another version must never stop the app from starting.
 */
export function parseSettings(raw: unknown): DesktopSettings {
  const settings = defaultSettings();
  if (!isObject(raw)) return settings;
  if (isObject(raw.lanSharing)) {
    const { enabled, port } = raw.lanSharing;
    if (typeof enabled === 'boolean') settings.lanSharing.enabled = enabled;
    if (isValidLanPort(port)) settings.lanSharing.port = port;
  }
  if (isObject(raw.window)) {
    settings.window.bounds = parseBounds(raw.window.bounds);
    if (typeof raw.window.maximized === 'boolean') settings.window.maximized = raw.window.maximized;
  }
  return settings;
}

/**
 * The desktop shell's own settings, a small JSON file in userData (apart from the data
 * directory, which may be shared with a headless server). Writes are durable and atomic, and
 * run one at a time in call order, so the file always holds the latest acknowledged state.
 */
export class SettingsStore {
  private readonly writes = new SerialQueue();

  private constructor(
    readonly path: string,
    private current: DesktopSettings,
  ) {}

  static async open(path: string): Promise<SettingsStore> {
    let text: string | null = null;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (text === null) return new SettingsStore(path, defaultSettings());
    try {
      return new SettingsStore(path, parseSettings(JSON.parse(text)));
    } catch {
      // Unreadable JSON: keep it for inspection instead of overwriting it on the next save.
      await rename(path, `${path}.unreadable-${Date.now()}`).catch(() => {});
      return new SettingsStore(path, defaultSettings());
    }
  }

  get(): DesktopSettings {
    return structuredClone(this.current);
  }

  /** Applies `change` to the current settings and resolves once they are on disk. */
  update(change: (draft: DesktopSettings) => void): Promise<DesktopSettings> {
    const draft = this.get();
    change(draft);
    const next = parseSettings(draft);
    this.current = next;
    return this.writes.run(async () => {
      await mkdir(dirname(this.path), { recursive: true });
      await writeFileDurably(this.path, [`${JSON.stringify(next, null, 2)}\n`]);
      return structuredClone(next);
    });
  }

  /** Resolves when every update so far has been written (or has failed). */
  flush(): Promise<void> {
    return this.writes.idle();
  }
}
