import type { ShowcaseSettingsBody, ShowcaseSettingsView } from '../../../shared';
import { api, ok } from './api-client';

/* The public showcase's settings (DESIGN §15, docs/API.md §18), admins only. */

export type { ShowcaseSettingsBody, ShowcaseSettingsView };

export const getShowcaseSettings = (signal?: AbortSignal) =>
  ok(api.GET('/api/v1/settings/showcase', { signal }));
export const putShowcaseSettings = (body: ShowcaseSettingsBody) =>
  ok(api.PUT('/api/v1/settings/showcase', { body }));
