import type { ListParams } from './portfolio-api';

/** Every cache key in one place, so invalidations cannot drift from the queries they target. */
export const queryKeys = {
  session: ['session'] as const,
  portfolios: ['portfolios'] as const,
  portfolioList: (params: Omit<ListParams, 'pageToken'>) => ['portfolios', 'list', params] as const,
  portfolio: (portfolioId: string) => ['portfolios', 'detail', portfolioId] as const,
  // Under 'portfolios', so every change that refreshes portfolios refreshes their history too;
  // keyed by the revision shown, so a change noticed any other way lists itself at once.
  revisions: (portfolioId: string, currentRevision: number) =>
    ['portfolios', 'revisions', portfolioId, currentRevision] as const,
  revision: (portfolioId: string, revision: number) =>
    ['portfolios', 'revision', portfolioId, revision] as const,
  // Under 'portfolios' too: a resolve or any other change refreshes the conflicts shown.
  portfolioConflicts: (portfolioId: string) => ['portfolios', 'conflicts', portfolioId] as const,
  conflicts: ['portfolios', 'conflict-list'] as const,
  // Under 'portfolios': every change to a portfolio refreshes the pick-lists too.
  facets: (keys: string) => ['portfolios', 'facets', keys] as const,
  shares: (portfolioId: string) => ['shares', portfolioId] as const,
  trash: ['trash'] as const,
  fileBlob: (portfolioId: string, fileId: string, width: number | 'full') =>
    ['files', portfolioId, fileId, width] as const,
  users: ['users'] as const,
  devices: (username: string) => ['users', 'devices', username] as const,
  syncConfig: ['sync', 'config'] as const,
  syncStatus: ['sync', 'status'] as const,
  backups: ['backups'] as const,
  backupSettings: ['backups', 'settings'] as const,
  showcaseSettings: ['settings', 'showcase'] as const,
};
