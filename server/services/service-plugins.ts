import { stat, unlink } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { DeviceService } from './device-service';
import { PortfolioService } from './portfolio-service';
import { SyncService } from './sync-service';
import { UserService } from './user-service';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every portfolio use case; the one write path (DESIGN §9). */
    portfolioService: PortfolioService;
    /** User management and the first admin. */
    userService: UserService;
    /** Device tokens of sync replicas (DESIGN §10). */
    deviceService: DeviceService;
    /** Replicas' mutations and the conflicts they leave (DESIGN §10). */
    syncService: SyncService;
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
        blobs: {
          adopt: (tempPath, sha256, durable) => blobs.adopt(tempPath, sha256, durable),
          collect: (sha256s) => blobs.collect(sha256s),
          discard: (tempPath) => unlink(tempPath).catch(() => {}),
        },
        limits: app.config.limits,
      }),
    );
  },
  { name: 'portfolio-service', dependencies: ['storage', 'blob-store'] },
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
          has: (sha256) =>
            stat(blobs.pathOf(sha256)).then(
              (found) => found.isFile(),
              () => false,
            ),
          hold: (sha256s) => blobs.hold(sha256s),
        },
      }),
    );
  },
  { name: 'sync-service', dependencies: ['portfolio-service', 'user-service', 'blob-store'] },
);
