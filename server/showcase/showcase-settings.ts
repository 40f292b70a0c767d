import { RASTER_TYPES, SHOWCASE_LOGO_BYTES, type ShowcaseSettingsBody } from '../../shared';
import { ApiError } from '../errors';
import type { SettingsStore } from '../repositories/storage-backend';

/** The showcase's settings as stored and as the pages use them. */
export interface ShowcaseSettings {
  enabled: boolean;
  title: string;
  intro: string;
  /** The logo's bytes in base64 and its sniffed type, or null. */
  logo: { data: string; mimeType: string } | null;
  staffPicksFirst: boolean;
  publicOriginals: boolean;
  publicDocuments: boolean;
}

export const SHOWCASE_SETTINGS_KEY = 'showcaseSettings';

/** Off until an admin turns it on (DESIGN §15). */
export const DEFAULT_SHOWCASE_SETTINGS: ShowcaseSettings = {
  enabled: false,
  title: 'Showcase',
  intro: '',
  logo: null,
  staffPicksFirst: false,
  publicOriginals: false,
  publicDocuments: false,
};

/** Logos the showcase shows: raster images a browser draws everywhere. */
const LOGO_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp']);

/**
 * How long a read of the settings is reused. A change made on this instance applies at once; one
 * made by another instance sharing the database applies within this time.
 */
const REUSE_MS = 1000;

/** Reads and changes the showcase settings, kept in the backend's settings (both backends). */
export class ShowcaseSettingsStore {
  private cached: { settings: ShowcaseSettings; at: number } | undefined;

  constructor(
    private readonly store: Pick<SettingsStore, 'get' | 'put'>,
    private readonly now: () => number = Date.now,
  ) {}

  async get(): Promise<ShowcaseSettings> {
    if (this.cached && this.now() - this.cached.at < REUSE_MS) return this.cached.settings;
    const stored = await this.store.get<Partial<ShowcaseSettings>>(SHOWCASE_SETTINGS_KEY);
    const settings = { ...DEFAULT_SHOWCASE_SETTINGS, ...stored };
    this.cached = { settings, at: this.now() };
    return settings;
  }

  /** Stores a change; an omitted option keeps its value, an omitted logo keeps the logo. */
  async put(body: ShowcaseSettingsBody): Promise<ShowcaseSettings> {
    const current = await this.get();
    const next: ShowcaseSettings = {
      enabled: body.enabled,
      title: body.title.trim() || DEFAULT_SHOWCASE_SETTINGS.title,
      intro: body.intro,
      logo:
        body.logo === undefined
          ? current.logo
          : body.logo === null
            ? null
            : await logoOf(body.logo),
      staffPicksFirst: body.staffPicksFirst ?? current.staffPicksFirst,
      publicOriginals: body.publicOriginals ?? current.publicOriginals,
      publicDocuments: body.publicDocuments ?? current.publicDocuments,
    };
    await this.store.put(SHOWCASE_SETTINGS_KEY, next);
    this.cached = { settings: next, at: this.now() };
    return next;
  }
}

function refuseLogo(message: string): never {
  throw new ApiError('VALIDATION_FAILED', message, [{ field: 'body.logo', message }]);
}

/** A logo from base64 (a data URL too): a PNG, JPEG or WebP image of at most 256 KB. */
async function logoOf(text: string): Promise<{ data: string; mimeType: string }> {
  const base64 = text.replace(/^data:[^,]*;base64,/, '');
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length === 0) refuseLogo('The logo is empty.');
  if (bytes.length > SHOWCASE_LOGO_BYTES) refuseLogo('The logo is larger than 256 KB.');
  const { fileTypeFromBuffer } = await import('file-type');
  const mimeType = (await fileTypeFromBuffer(bytes))?.mime ?? '';
  if (!LOGO_TYPES.has(mimeType) || !RASTER_TYPES.has(mimeType))
    refuseLogo('The logo must be a PNG, JPEG or WebP image.');
  return { data: bytes.toString('base64'), mimeType };
}
