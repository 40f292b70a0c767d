import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import packageJson from '../../package.json' with { type: 'json' };
import { BackupService } from '../services/backup-service';

declare module 'fastify' {
  interface FastifyInstance {
    /** Backups of this library (DESIGN §11): now, on a schedule, listed, verified. */
    backups: BackupService;
  }
}

/** How often the schedule looks whether a backup is due, and its first look after a start. */
const SCHEDULE_CHECK_MS = 60 * 60 * 1000;
const SCHEDULE_FIRST_CHECK_MS = 5 * 60 * 1000;

export default fp(
  async function backupsPlugin(app: FastifyInstance) {
    const service = new BackupService({
      backend: app.backend,
      blobs: {
        pathOf: (sha256) => app.blobStore.pathOf(sha256),
        hold: (sha256s) => app.blobStore.hold(sha256s),
      },
      defaults: app.config.backups,
      settingsStore: app.backend.settings,
      productVersion: packageJson.version,
      log: app.log,
    });
    app.decorate('backups', service);

    let timer: ReturnType<typeof setTimeout> | undefined;
    const check = () => {
      service
        .scheduled()
        .catch((error: unknown) => app.log.error({ err: error }, 'Backup schedule failed'));
    };
    app.addHook('onReady', async () => {
      timer = setTimeout(function tick() {
        check();
        timer = setTimeout(tick, SCHEDULE_CHECK_MS).unref();
      }, SCHEDULE_FIRST_CHECK_MS).unref();
    });
    app.addHook('preClose', async () => {
      clearTimeout(timer);
      await service.idle();
    });
  },
  { name: 'backups', dependencies: ['storage', 'blob-store'] },
);
