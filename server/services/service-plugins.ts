import { randomBytes } from 'node:crypto';
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { PartialUploads } from '../storage/partial-uploads';
import { UploadLedger } from '../storage/upload-ledger';
import { BlobService } from './blob-service';
import { CsvImportService } from './csv-import-service';
import { BulkService } from './bulk-service';
import { DeviceService } from './device-service';
import { PortfolioService } from './portfolio-service';
import { ShareService } from './share-service';
import { SyncService } from './sync-service';
import { TransferService } from './transfer-service';
import { UserService } from './user-service';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every portfolio use case; the one write path (DESIGN §9). */
    portfolioService: PortfolioService;
    /** Bulk edit of many portfolios and its undo (DESIGN §16). */
    bulkService: BulkService;
    /** User management and the first admin. */
    userService: UserService;
    /** Device tokens of sync replicas (DESIGN §10). */
    deviceService: DeviceService;
    /** Replicas' mutations and the conflicts they leave (DESIGN §10). */
    syncService: SyncService;
    /** Blobs by content for sync: missing, resumable uploads, downloads. */
    blobService: BlobService;
    /** Export and import of portfolios (DESIGN §11). */
    transferService: TransferService;
    /** CSV import of spreadsheet rows (DESIGN §16). */
    csvImportService: CsvImportService;
    /** Share links of portfolios (DESIGN §15). */
    shareService: ShareService;
  }
}

/** The user use cases over the user repository. */
export const userServicePlugin = fp(
  async function userService(app: FastifyInstance) {
    app.decorate('userService', new UserService(app.userRepository, app.config.auth));
    app.decorate('deviceService', new DeviceService(app.userRepository));
  },
  { name: 'user-service', dependencies: ['storage'] },
);

/** The portfolio use cases over the repository contract and the blob store. */
export const portfolioServicePlugin = fp(
  async function portfolioService(app: FastifyInstance) {
    const blobs = app.blobStore;
    app.decorate(
      'portfolioService',
      new PortfolioService({
        repository: app.portfolios,
        pageTokens: app.pageTokens,
        blobs: {
          adopt: (tempPath, sha256, durable) => blobs.adopt(tempPath, sha256, durable),
          collect: (sha256s) => blobs.collect(sha256s),
          discard: (tempPath) => unlink(tempPath).catch(() => {}),
          hold: (sha256s) => blobs.hold(sha256s),
        },
        facts: (sha256, clientName) => app.blobFacts.of(sha256, clientName),
        limits: app.config.limits,
      }),
    );
    app.decorate('bulkService', new BulkService(app.portfolioService));
  },
  { name: 'portfolio-service', dependencies: ['storage', 'blob-store'] },
);

/** Share links over the share repository, checked like portfolio changes and sign-ins. */
export const shareServicePlugin = fp(
  async function shareService(app: FastifyInstance) {
    // One secret for every instance on the backend: an image link any of them signed works on all.
    const { secret } = await app.backend.settings.shared('shareLinkSecret', () => ({
      secret: randomBytes(32).toString('base64url'),
    }));
    app.decorate(
      'shareService',
      new ShareService({
        shares: app.backend.shares,
        repository: app.portfolios,
        portfolios: app.portfolioService,
        attempts: app.userRepository,
        auth: app.config.auth,
        secret,
      }),
    );
  },
  { name: 'share-service', dependencies: ['storage', 'portfolio-service'] },
);

/** The hub side of sync over the portfolio service, the devices and the blob store. */
export const syncServicePlugin = fp(
  async function syncService(app: FastifyInstance) {
    const blobs = app.blobStore;
    app.decorate(
      'syncService',
      new SyncService({
        repository: app.portfolios,
        portfolios: app.portfolioService,
        devices: app.deviceService,
        blobs: {
          has: (sha256) => blobs.has(sha256),
          hold: (sha256s) => blobs.hold(sha256s),
        },
        facts: (sha256, clientName) => app.blobFacts.of(sha256, clientName),
        limits: app.config.limits,
      }),
    );
  },
  { name: 'sync-service', dependencies: ['portfolio-service', 'user-service', 'blob-store'] },
);

/** Export and import over the portfolio and sync services, the repository and the blob store. */
export const transferServicePlugin = fp(
  async function transferService(app: FastifyInstance, options: { version: string }) {
    const blobs = app.blobStore;
    const limits = app.config.limits;
    app.decorate(
      'transferService',
      new TransferService({
        repository: app.portfolios,
        portfolios: app.portfolioService,
        sync: app.syncService,
        blobs: {
          tempDir: blobs.tempDir,
          has: (sha256) => blobs.has(sha256),
          readStream: (sha256) => blobs.readStream(sha256),
          adopt: (path, sha256) => blobs.adopt(path, sha256, Promise.resolve()),
          collect: (sha256s) => blobs.collect(sha256s),
        },
        facts: (sha256, clientName) => app.blobFacts.of(sha256, clientName),
        archive: {
          entryBytes: limits.fileBytes,
          jsonBytes: Math.min(64 * 1024 * 1024, limits.importBytes),
          totalBytes: limits.importBytes,
          entries: 1_000_000,
        },
        productVersion: options.version,
      }),
    );
  },
  { name: 'transfer-service', dependencies: ['portfolio-service', 'sync-service', 'blob-store'] },
);

/** CSV import over the portfolio service (every write) and the repository (key look-ups). */
export const csvImportServicePlugin = fp(
  async function csvImportService(app: FastifyInstance) {
    app.decorate('csvImportService', new CsvImportService(app.portfolios, app.portfolioService));
  },
  { name: 'csv-import-service', dependencies: ['portfolio-service'] },
);

/** A mark in the upload ledger younger than this counts though its upload wrote nothing yet. */
const LEDGER_GRACE_MS = 10 * 60 * 1000;
/** The most time between two sweeps of idle partial uploads. */
const SWEEP_EVERY_MS = 10 * 60 * 1000;

/**
 * The blob use cases over the blob store, with partial uploads kept under
 * `<dataDir>/blobs/partial/` and who uploaded what under `<dataDir>/blobs/uploaders/` (beside the
 * blobs: every instance sharing them sees it). Partials left idle (an hour by default) are
 * removed at start and then every tenth of that, at most every 10 minutes; the ledger drops the
 * marks of blobs now used or gone on the same pass.
 */
export const blobServicePlugin = fp(
  async function blobService(app: FastifyInstance) {
    const { uploads } = app.config;
    const partials = await PartialUploads.open(join(app.config.dataDir, 'blobs', 'partial'));
    const ledger = await UploadLedger.open(
      join(app.config.dataDir, 'blobs', 'uploaders'),
      {
        partialSize: (sha256) => partials.size(sha256),
        blobSize: (sha256) => app.blobStore.sizeOf(sha256),
        isReferenced: async (sha256) => app.portfolios.isBlobReferenced(sha256),
        partials: () => partials.list(),
      },
      LEDGER_GRACE_MS,
    );
    app.decorate(
      'blobService',
      new BlobService({
        blobs: app.blobStore,
        partials,
        isReferenced: async (sha256) => app.portfolios.isBlobReferenced(sha256),
        maxBytes: app.config.limits.fileBytes,
        keepUnreferencedMs: uploads.unreferencedKeepMs,
        ledger,
        quota: uploads,
      }),
    );
    const sweep = () =>
      partials
        .removeOlderThan(uploads.partialIdleMs)
        .then(async (removed) => {
          if (removed > 0) app.log.info(`Removed ${removed} idle partial blob upload(s)`);
          await ledger.pending();
        })
        .catch((error: unknown) => app.log.error({ err: error }, 'partial upload cleanup failed'));
    let timer: NodeJS.Timeout | undefined;
    app.addHook('onReady', async () => {
      await sweep();
      timer = setInterval(() => void sweep(), Math.min(uploads.partialIdleMs / 10, SWEEP_EVERY_MS));
      timer.unref();
    });
    app.addHook('onClose', async () => clearInterval(timer));
  },
  { name: 'blob-service', dependencies: ['storage', 'blob-store'] },
);
