import { Type, type Static } from '@sinclair/typebox';

/** The public showcase's settings (DESIGN §15): off by default, changed by admins. */

/** A logo is small: it is kept in the settings and sent with every page's first view. */
export const SHOWCASE_LOGO_BYTES = 256 * 1024;

export const ShowcaseSettingsSchema = Type.Object(
  {
    enabled: Type.Boolean({ description: 'Off: every /showcase path is a 404' }),
    title: Type.String({ minLength: 1, maxLength: 120, description: 'Shown on every page' }),
    intro: Type.String({ maxLength: 2000, description: 'Plain text under the title' }),
    logo: Type.Optional(
      Type.Union(
        [Type.String({ maxLength: Math.ceil((SHOWCASE_LOGO_BYTES * 4) / 3) + 64 }), Type.Null()],
        {
          description:
            'A PNG, JPEG or WebP image in base64 (a "data:…;base64," prefix is allowed), at most ' +
            '256 KB; null removes it; left out keeps it',
        },
      ),
    ),
    staffPicksFirst: Type.Optional(
      Type.Boolean({ description: 'The gallery lists staff picks before the rest' }),
    ),
    publicOriginals: Type.Optional(
      Type.Boolean({ description: 'Visitors may open the original image files too' }),
    ),
    publicDocuments: Type.Optional(
      Type.Boolean({ description: 'Visitors may download additional documents too' }),
    ),
  },
  { $id: 'ShowcaseSettingsBody', additionalProperties: false },
);
export type ShowcaseSettingsBody = Static<typeof ShowcaseSettingsSchema>;

export const ShowcaseSettingsViewSchema = Type.Object(
  {
    enabled: Type.Boolean(),
    title: Type.String(),
    intro: Type.String(),
    logo: Type.Union([Type.String({ description: 'The logo as a data URL' }), Type.Null()]),
    staffPicksFirst: Type.Boolean(),
    publicOriginals: Type.Boolean(),
    publicDocuments: Type.Boolean(),
    url: Type.String({ description: 'Where the showcase is, on this server' }),
  },
  { $id: 'ShowcaseSettings' },
);
export type ShowcaseSettingsView = Static<typeof ShowcaseSettingsViewSchema>;
