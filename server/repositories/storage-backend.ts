/**
 * The one seam between the server and where it keeps things (DESIGN §12): the storage plugin
 * opens one backend — the embedded store in a data directory, or PostgreSQL — and everything
 * above it speaks only this contract, never asking which one it is. Each backend implements it
 * under `server/storage/embedded/` or `server/storage/postgres/`.
 */
import type { FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { RepositoryError, type PortfolioRepository } from './portfolio-repository-contract';
import type { ShareRepository } from './share-repository-contract';
import type { UserRepository } from './user-repository-contract';
import type { LibraryDump } from './library-dump';

/** Background jobs that run on one instance at a time when instances share a backend. */
export type JobName = 'retention' | 'sessionSweep' | 'backup';

/** Instance-wide settings, shared by every instance on the backend. */
export interface SettingsStore {
  /** The setting `key`, made by `create` on first use; every instance answers the same value. */
  shared<T>(key: string, create: () => T): Promise<T>;
  get<T>(key: string): Promise<T | undefined>;
  /** Stores `value` durably; answered once it is. */
  put<T>(key: string, value: T): Promise<void>;
}

export interface StorageBackend {
  /** For logs and the status page only: nothing above the seam decides by it. */
  readonly kind: 'embedded' | 'postgres';
  readonly portfolios: PortfolioRepository;
  readonly users: UserRepository;
  /** Share links of portfolios (DESIGN §15). */
  readonly shares: ShareRepository;
  readonly settings: SettingsStore;
  /**
   * Several server instances share this backend and its blob folder: a blob one instance freed
   * may be in use by a change another is committing (see the blob store's shared grace).
   */
  readonly shared: boolean;
  /**
   * Runs one pass of a background job unless another instance sharing the backend is running it
   * now (answers undefined then).
   */
  runJob<T>(job: JobName, pass: () => Promise<T>): Promise<T | undefined>;
  /**
   * The whole library (portfolios, kept revisions, trash, tombstones, users) as of one `seq`,
   * read while requests and writes go on, holding no lock longer than a commit: what a backup
   * holds (DESIGN §11). Only durable changes are in it.
   */
  dumpLibrary(): Promise<LibraryDump>;
  /**
   * Resolves once every change acknowledged so far is durable: a blob nothing refers to any more
   * may only be removed after the change that stopped referring to it is.
   */
  durable(): Promise<void>;
  /** Where request rate limits are counted; undefined: in this process's memory. */
  readonly rateLimitStore: FastifyRateLimitStoreCtor | undefined;
  /** Drops the backend's own expired bookkeeping (rate-limit windows); run by the sweep job. */
  sweep(): Promise<void>;
  /**
   * The storage failure `error` is, typed in this contract, or undefined when it is none: the
   * service maps these to API errors in one place.
   */
  failureOf(error: unknown): StorageFailure | undefined;
  close(): Promise<void>;
}

/** A write that could not be made durable (a full disk, an I/O error): nothing was changed. */
export class StorageWriteFailedError extends RepositoryError {
  override readonly name: string = 'StorageWriteFailedError';
}

/** The backend cannot be reached now (a database restarting, a network cut); try again soon. */
export class StorageUnavailableError extends RepositoryError {
  override readonly name = 'StorageUnavailableError';
  constructor(readonly reason: string) {
    super(`The database cannot be reached: ${reason}`);
  }
}

export type StorageFailure = StorageWriteFailedError | StorageUnavailableError;
