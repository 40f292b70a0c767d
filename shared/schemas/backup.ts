import { Type, type Static } from '@sinclair/typebox';

/** Backups of the library (DESIGN §11): taken while the server runs, listed, verified. */

export const BackupSchema = Type.Object(
  {
    backupId: Type.String({ description: 'Also the name of its folder in the backup folder' }),
    path: Type.String({ description: 'Its folder on the server (empty while it runs)' }),
    seq: Type.Integer({ description: 'Every change up to this seq is in it' }),
    createdTime: Type.Integer({ description: 'When it was started (ms since the epoch)' }),
    sizeBytes: Type.Integer({ description: 'Bytes of its files, shared ones included' }),
    status: Type.Union([Type.Literal('running'), Type.Literal('done'), Type.Literal('failed')]),
    error: Type.Optional(Type.String({ description: 'Why it failed, in words' })),
    progress: Type.Optional(
      Type.Object(
        {
          done: Type.Integer({ description: 'Files handled' }),
          total: Type.Integer({ description: 'Files in the backup' }),
          bytes: Type.Integer({ description: 'Bytes copied (files the folder had cost none)' }),
        },
        { description: 'While it runs' },
      ),
    ),
  },
  { $id: 'Backup' },
);
export type Backup = Static<typeof BackupSchema>;

export const BackupStartedSchema = Type.Object(
  {
    backupId: Type.String(),
    status: Type.Literal('running'),
  },
  { $id: 'BackupStarted' },
);

export const BackupListSchema = Type.Object(
  { backups: Type.Array(BackupSchema, { description: 'Newest first' }) },
  { $id: 'BackupList' },
);
export type BackupList = Static<typeof BackupListSchema>;

export const BackupSettingsSchema = Type.Object(
  {
    target: Type.String({
      minLength: 1,
      maxLength: 4096,
      description: 'The backup folder on the server: a full path',
    }),
    intervalHours: Type.Integer({
      minimum: 0,
      maximum: 8760,
      description: 'Hours between scheduled backups; 0 turns the schedule off',
    }),
    keep: Type.Integer({ minimum: 1, maximum: 1000, description: 'Backups kept in the folder' }),
  },
  { $id: 'BackupSettings', additionalProperties: false },
);
export type BackupSettings = Static<typeof BackupSettingsSchema>;

export const BackupVerificationSchema = Type.Object(
  {
    backupId: Type.String(),
    whole: Type.Boolean({ description: 'Every file matches the checksum in its manifest' }),
    files: Type.Integer({ description: 'Files checked' }),
    problems: Type.Array(Type.String(), { description: 'What is missing or damaged, in words' }),
  },
  { $id: 'BackupVerification' },
);
export type BackupVerification = Static<typeof BackupVerificationSchema>;

export const BackupIdParamsSchema = Type.Object({
  backupId: Type.String({ pattern: '^backup-[0-9]{8}T[0-9]{6}Z-[0-9a-f]{4,}$' }),
});
