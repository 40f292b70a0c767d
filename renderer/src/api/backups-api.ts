import type { Backup, BackupSettings, BackupVerification } from '../../../shared';
import { api, ok } from './api-client';

/* Backups of the library (DESIGN §11, docs/API.md §16), admins only. */

export type { Backup, BackupSettings, BackupVerification };

export const listBackups = (signal?: AbortSignal) => ok(api.GET('/api/v1/backups', { signal }));
/** Starts a backup: the finished backup, or `{backupId, status: "running"}` to follow. */
export const createBackup = () => ok(api.POST('/api/v1/backups'));
export const verifyBackup = (backupId: string) =>
  ok(api.POST('/api/v1/backups/{backupId}/verify', { params: { path: { backupId } } }));
export const getBackupSettings = (signal?: AbortSignal) =>
  ok(api.GET('/api/v1/backups/settings', { signal }));
export const putBackupSettings = (body: BackupSettings) =>
  ok(api.PUT('/api/v1/backups/settings', { body }));
