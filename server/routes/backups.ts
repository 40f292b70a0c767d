import type { FastifyInstance } from 'fastify';
import {
  BackupIdParamsSchema,
  BackupListSchema,
  BackupSchema,
  BackupSettingsSchema,
  BackupStartedSchema,
  BackupVerificationSchema,
  type BackupSettings,
} from '../../shared';
import { ApiError } from '../errors';
import { errors, json } from '../openapi/responses';
import { BackupRunningError } from '../services/backup-service';

/**
 * How long POST /backups waits for the backup to end: a small library's answer is then the
 * finished backup (201), a large one's the running one (202), to follow in GET /backups.
 */
const ANSWER_WITHIN_MS = 2000;

/** Backups of the library (DESIGN §11), admin only. */
export default async function backupRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSession);
  app.addHook('onRequest', app.requireRole('admin'));
  const common = { tags: ['backups'], security: [{ session: [] }] };

  app.post(
    '/api/v1/backups',
    {
      schema: {
        ...common,
        operationId: 'createBackup',
        summary: 'Back up the library now',
        description:
          'Admins. Reads every portfolio (with its history and the trash) at one seq while the ' +
          'server goes on answering and writing, and copies it with every file it refers to ' +
          'into the backup folder. Answers 201 with the backup when it ended within a moment, ' +
          'else 202: follow it in GET /api/v1/backups. One backup runs at a time.',
        response: {
          201: json(BackupSchema, 'Backed up'),
          202: json(BackupStartedSchema, 'Started; it goes on in the background'),
          ...errors('FORBIDDEN', 'BACKUP_RUNNING', 'BACKUP_FAILED', 'DISK_FULL'),
        },
      },
    },
    async (_request, reply) => {
      let started;
      try {
        started = app.backups.start();
      } catch (error) {
        if (error instanceof BackupRunningError) throw new ApiError('BACKUP_RUNNING');
        throw error;
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), ANSWER_WITHIN_MS);
      });
      const ended = await Promise.race([started.finished, timeout]).finally(() =>
        clearTimeout(timer),
      );
      if (ended === undefined)
        return reply.status(202).send({ backupId: started.entry.backupId, status: 'running' });
      if (ended.status === 'done') {
        const { failure: _failure, ...entry } = ended;
        return reply.status(201).send(entry);
      }
      if (ended.failure === 'busy') throw new ApiError('BACKUP_RUNNING');
      throw new ApiError(ended.failure === 'diskFull' ? 'DISK_FULL' : 'BACKUP_FAILED', ended.error);
    },
  );

  app.get(
    '/api/v1/backups',
    {
      schema: {
        ...common,
        operationId: 'listBackups',
        summary: 'The backups in the backup folder',
        description:
          'Admins. Newest first: the one running (with its progress), the whole ones in the ' +
          'folder, and recent failures with their reason. A backup a kill interrupted is never ' +
          'listed as whole.',
        response: { 200: json(BackupListSchema, 'The backups'), ...errors('FORBIDDEN') },
      },
    },
    async () => ({ backups: await app.backups.list() }),
  );

  app.post<{ Params: { backupId: string } }>(
    '/api/v1/backups/:backupId/verify',
    {
      schema: {
        ...common,
        operationId: 'verifyBackup',
        summary: 'Re-hash every file of a backup',
        description:
          'Admins. Reads every file of the backup (its share of the blob folder too) and ' +
          'compares it with the checksum in its manifest.',
        params: BackupIdParamsSchema,
        response: {
          200: json(BackupVerificationSchema, 'Checked; `whole` says whether it can be used'),
          ...errors('FORBIDDEN', 'VALIDATION_FAILED', 'BACKUP_NOT_FOUND'),
        },
      },
    },
    async (request) => app.backups.verify(request.params.backupId),
  );

  app.get(
    '/api/v1/backups/settings',
    {
      schema: {
        ...common,
        operationId: 'getBackupSettings',
        summary: 'Where backups go, how often, how many are kept',
        response: { 200: json(BackupSettingsSchema, 'The settings'), ...errors('FORBIDDEN') },
      },
    },
    async () => app.backups.settingsView(),
  );

  app.put<{ Body: BackupSettings }>(
    '/api/v1/backups/settings',
    {
      schema: {
        ...common,
        operationId: 'putBackupSettings',
        summary: 'Change where backups go, how often, how many are kept',
        description:
          'Admins. Applies from the next backup on; backups made so far stay where they are.',
        body: BackupSettingsSchema,
        response: {
          200: json(BackupSettingsSchema, 'The settings now'),
          ...errors('FORBIDDEN', 'VALIDATION_FAILED'),
        },
      },
    },
    async (request) => app.backups.saveSettings(request.body),
  );
}
