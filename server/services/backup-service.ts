import { isAbsolute, join } from 'node:path';
import type { BackupSettings, BackupVerification } from '../../shared';
import { BackupInvalidError } from '../backup/manifest';
import { listBackups, pruneBackups, verifyBackup } from '../backup/read-backup';
import { ApiError } from '../errors';
import {
  BackupWriteError,
  newBackupId,
  writeBackup,
  type BackupProgress,
} from '../backup/write-backup';
import type { BackupOptions } from '../config';
import type { SettingsStore, StorageBackend } from '../repositories/storage-backend';
import { blobsOf } from '../storage/library-transfer';

export type BackupStatus = 'running' | 'done' | 'failed';

/** One backup as the API shows it (DESIGN §11). */
export interface BackupEntry {
  backupId: string;
  path: string;
  seq: number;
  createdTime: number;
  sizeBytes: number;
  status: BackupStatus;
  error?: string;
  /** While running: files copied of all, and bytes copied. */
  progress?: { done: number; total: number; bytes: number };
}

/** Why a backup failed, for the API to choose its error. */
export type BackupFailure = 'busy' | 'diskFull' | 'failed';

/** A backup is running already (here, or on another instance sharing the database). */
export class BackupRunningError extends Error {
  override readonly name = 'BackupRunningError';
  constructor() {
    super('A backup is running already; wait for it to end.');
  }
}

export interface BackupServiceOptions {
  backend: Pick<StorageBackend, 'dumpLibrary' | 'runJob'>;
  blobs: { pathOf(sha256: string): string; hold(sha256s: Iterable<string>): () => void };
  /** Where backups go, how often, how many kept, as the start gave them. */
  defaults: BackupOptions;
  /** Where an admin's changes to them are kept (shared by instances). */
  settingsStore: Pick<SettingsStore, 'get' | 'put'>;
  productVersion: string;
  log: { info(msg: string): void; error(obj: unknown, msg: string): void };
  now?: () => number;
}

/** Where an admin's backup settings are kept in the backend's settings. */
export const BACKUP_SETTINGS_KEY = 'backupSettings';

const HOUR_MS = 60 * 60 * 1000;

/** Failed backups remembered for the list (they leave no folder). */
const FAILURES_KEPT = 5;

/**
 * Backups of the running server (DESIGN §11): one at a time per instance, and on a shared
 * database one at a time across instances (the backend's job lock). The library is read at one
 * seq by the backend while requests and writes go on; its blobs are held from removal until
 * they are copied. After each backup, retention keeps the newest `keep`.
 */
export class BackupService {
  private current: { entry: BackupEntry; finished: Promise<BackupEntry> } | undefined;
  private failures: (BackupEntry & { failure: BackupFailure })[] = [];
  private readonly now: () => number;

  constructor(private readonly options: BackupServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The settings in force (read at the start of each backup): the start's, or an admin's. */
  async settings(): Promise<BackupOptions> {
    const stored = await this.options.settingsStore.get<BackupSettings>(BACKUP_SETTINGS_KEY);
    if (!stored) return this.options.defaults;
    return { target: stored.target, intervalMs: stored.intervalHours * HOUR_MS, keep: stored.keep };
  }

  async settingsView(): Promise<BackupSettings> {
    const { target, intervalMs, keep } = await this.settings();
    return { target, intervalHours: Math.round(intervalMs / HOUR_MS), keep };
  }

  /** Changes the settings from the next backup on; the folder must be a full path. */
  async saveSettings(settings: BackupSettings): Promise<BackupSettings> {
    if (!isAbsolute(settings.target))
      throw new ApiError('VALIDATION_FAILED', 'The backup folder must be a full path.', [
        { field: 'body.target', message: 'must be a full path, such as /srv/backups' },
      ]);
    const saved: BackupSettings = {
      target: settings.target,
      intervalHours: settings.intervalHours,
      keep: settings.keep,
    };
    await this.options.settingsStore.put(BACKUP_SETTINGS_KEY, saved);
    return saved;
  }

  /** Re-hashes every file of one backup in the backup folder against its manifest. */
  async verify(backupId: string): Promise<BackupVerification> {
    const { target } = await this.settings();
    const listed = (await listBackups(target)).some((backup) => backup.backupId === backupId);
    if (!listed) throw new ApiError('BACKUP_NOT_FOUND');
    try {
      const { manifest } = await verifyBackup(join(target, backupId));
      return { backupId, whole: true, files: Object.keys(manifest.files).length, problems: [] };
    } catch (error) {
      if (!(error instanceof BackupInvalidError)) throw error;
      const problems = error.problems.length > 0 ? error.problems : [error.message];
      return { backupId, whole: false, files: 0, problems };
    }
  }

  /** The backup running now, if any. */
  get running(): BackupEntry | undefined {
    return this.current?.entry;
  }

  /**
   * Starts a backup; `finished` settles (never rejects) when it ends, done or failed. Throws
   * BackupRunningError while one runs in this instance.
   */
  start(): { entry: BackupEntry; finished: Promise<BackupEntry & { failure?: BackupFailure }> } {
    if (this.current) throw new BackupRunningError();
    const createdTime = this.now();
    const entry: BackupEntry = {
      backupId: newBackupId(createdTime),
      path: '',
      seq: 0,
      createdTime,
      sizeBytes: 0,
      status: 'running',
      progress: { done: 0, total: 0, bytes: 0 },
    };
    const finished = this.run(entry).finally(() => (this.current = undefined));
    this.current = { entry, finished };
    return { entry, finished };
  }

  private async run(entry: BackupEntry): Promise<BackupEntry & { failure?: BackupFailure }> {
    try {
      const ran = await this.options.backend.runJob('backup', () => this.write(entry));
      if (ran === undefined) return this.fail(entry, 'busy', new BackupRunningError().message);
      Object.assign(entry, { status: 'done' as const });
      delete entry.progress;
      this.options.log.info(`Backup ${entry.backupId} is complete (seq ${entry.seq})`);
      return entry;
    } catch (error) {
      const message = (error as Error).message;
      const failure: BackupFailure =
        error instanceof BackupWriteError && error.diskFull ? 'diskFull' : 'failed';
      this.options.log.error({ err: error }, `Backup ${entry.backupId} failed`);
      return this.fail(entry, failure, message);
    }
  }

  private fail(entry: BackupEntry, failure: BackupFailure, error: string) {
    const failed = { ...entry, status: 'failed' as const, error, failure };
    delete failed.progress;
    if (failure !== 'busy') this.failures = [failed, ...this.failures].slice(0, FAILURES_KEPT);
    return failed;
  }

  /** Answers true once written (runJob answers undefined when another instance runs one). */
  private async write(entry: BackupEntry): Promise<true> {
    const settings = await this.settings();
    const dump = await this.options.backend.dumpLibrary();
    entry.seq = dump.library.seq;
    // Retention or a purge may free a blob this backup still has to copy.
    const release = this.options.blobs.hold(blobsOf(dump));
    try {
      const written = await writeBackup({
        target: settings.target,
        dump,
        blobPath: (sha256) => this.options.blobs.pathOf(sha256),
        productVersion: this.options.productVersion,
        backupId: entry.backupId,
        now: () => entry.createdTime,
        onProgress: ({ done, total, bytes }: BackupProgress) =>
          (entry.progress = { done, total, bytes }),
      });
      entry.path = written.path;
      entry.sizeBytes = written.manifest.sizeBytes;
    } finally {
      release();
    }
    await pruneBackups(settings.target, settings.keep);
    return true;
  }

  /** The backups in the target, newest first, with the running one and recent failures. */
  async list(): Promise<BackupEntry[]> {
    const { target } = await this.settings();
    const done: BackupEntry[] = (await listBackups(target)).map((backup) => ({
      backupId: backup.backupId,
      path: backup.path,
      seq: backup.seq,
      createdTime: backup.createdTime,
      sizeBytes: backup.sizeBytes,
      status: 'done',
    }));
    const others: BackupEntry[] = [
      ...(this.current ? [{ ...this.current.entry }] : []),
      ...this.failures.map(({ failure: _failure, ...entry }) => entry),
    ];
    return [
      ...others,
      ...done.filter((backup) => backup.backupId !== this.current?.entry.backupId),
    ].sort((a, b) => b.createdTime - a.createdTime);
  }

  /**
   * One pass of the schedule: starts a backup when the newest whole one is older than the
   * interval (or there is none). Answers whether it started one.
   */
  async scheduled(): Promise<boolean> {
    const { intervalMs, target } = await this.settings();
    if (intervalMs <= 0 || this.current) return false;
    const newest = (await listBackups(target))[0];
    if (newest && this.now() - newest.createdTime < intervalMs) return false;
    await this.start().finished;
    return true;
  }

  /** Resolves once the running backup, if any, has ended. */
  async idle(): Promise<void> {
    await this.current?.finished;
  }
}
