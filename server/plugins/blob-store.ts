import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { BlobFactsReader } from '../media/blob-facts';
import { Thumbnails } from '../media/thumbnails';
import { BlobStore } from '../storage/blob-store';
import { RetentionJob } from '../storage/retention-job';

declare module 'fastify' {
  interface FastifyInstance {
    blobStore: BlobStore;
    /** What each stored blob is, read from its bytes once (DESIGN §5: the server computes it). */
    blobFacts: BlobFactsReader;
    thumbnails: Thumbnails;
    /** History and trash retention, run at start and then hourly (`run()` for one pass now). */
    retention: RetentionJob;
  }
}

const RETENTION_INTERVAL_MS = 60 * 60 * 1000;
/** The first pass after a start: once the start's first requests are answered. */
const RETENTION_FIRST_PASS_MS = 60 * 1000;

/**
 * The blob store and thumbnail cache under the data directory; sweeps crash leftovers at start.
 * Also runs history and trash retention, since what it drops decides which blobs are freed.
 */
export default fp(
  async function blobStorePlugin(app: FastifyInstance) {
    // A blob is in use while a live portfolio, a trashed one or a kept revision refers to it.
    const isReferenced = (sha: string) => app.portfolios.isBlobReferenced(sha);
    const root = join(app.config.dataDir, 'blobs');
    // The thumbnail cache and the blob store refer to each other: thumbnails are made from blobs
    // and removed with them. `blobs` is only used once both exist.
    const thumbnails = new Thumbnails({
      dir: join(app.config.dataDir, 'thumbnails'),
      sourcePath: (sha) => blobs.pathOf(sha),
      maxPixels: app.config.limits.imagePixels,
    });
    const blobs = await BlobStore.open({
      root,
      isReferenced,
      onRemoved: (sha) => thumbnails.remove(sha),
      durable: () => app.backend.durable(),
      sharedGraceMs: app.backend.shared ? app.config.sharedBlobGraceMs : undefined,
      log: { warn: (msg) => app.log.warn(msg), error: (obj, msg) => app.log.error(obj, msg) },
    });
    await thumbnails.init();

    const swept = await blobs.sweep();
    // Read only when there are thumbnails to check: it walks every record (at 100k portfolios a
    // twentieth of a second of every start, before the first request).
    let referenced: Set<string> | undefined;
    const staleThumbnails = await thumbnails.sweep(async (sha) =>
      (referenced ??= await app.portfolios.referencedBlobs()).has(sha),
    );
    if (swept.temp + swept.orphans + staleThumbnails > 0) {
      app.log.info(
        `Swept ${swept.orphans} unreferenced blob(s), ${swept.temp} partial upload(s) and ` +
          `${staleThumbnails} stale thumbnail(s) left by an earlier run`,
      );
    }

    app.decorate('blobStore', blobs);
    app.decorate(
      'blobFacts',
      new BlobFactsReader({
        pathOf: (sha) => blobs.pathOf(sha),
        maxPixels: app.config.limits.imagePixels,
      }),
    );
    app.decorate('thumbnails', thumbnails);
    const retention = new RetentionJob({
      repository: app.portfolios,
      blobs,
      history: app.config.history,
      trash: app.config.trash,
      log: app.log,
      // On PostgreSQL one instance at a time runs a pass, and every pass collects the blobs
      // nothing refers to: those another instance freed were left to it (see sharedGraceMs).
      exclusive: (pass) => app.backend.runJob('retention', pass),
      alwaysCollect: app.backend.shared,
    });
    app.decorate('retention', retention);
    app.addHook('onReady', async () =>
      retention.start(RETENTION_INTERVAL_MS, RETENTION_FIRST_PASS_MS),
    );
    app.addHook('preClose', async () => retention.stop());
    app.addHook('onClose', async () => {
      blobs.forgetKept();
      await blobs.idle();
    });
  },
  { name: 'blob-store', dependencies: ['storage'] },
);
