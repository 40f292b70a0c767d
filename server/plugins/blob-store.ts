import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { PortfolioRecord, StoredFile } from '../../shared';
import { Thumbnails } from '../media/thumbnails';
import { BlobStore } from '../storage/blob-store';

declare module 'fastify' {
  interface FastifyInstance {
    blobStore: BlobStore;
    thumbnails: Thumbnails;
  }
}

export function filesOf(record: PortfolioRecord | undefined): StoredFile[] {
  if (!record) return [];
  return [
    ...(record.cover ? [record.cover] : []),
    ...record.draftingProcess,
    ...record.additionalDocument,
  ];
}

/**
 * How many file entries point at each blob, derived from the portfolios: built when the store
 * opens and kept in step through the store's change feed (rollbacks included), so it can never
 * disagree with the database.
 */
class ReferenceIndex {
  private readonly counts = new Map<string, number>();

  add(record: PortfolioRecord | undefined, delta: 1 | -1): void {
    for (const file of filesOf(record)) {
      const count = (this.counts.get(file.sha256) ?? 0) + delta;
      if (count > 0) this.counts.set(file.sha256, count);
      else this.counts.delete(file.sha256);
    }
  }

  has(sha256: string): boolean {
    return this.counts.has(sha256);
  }
}

/** The blob store and thumbnail cache under the data directory; sweeps crash leftovers at start. */
export default fp(
  async function blobStorePlugin(app: FastifyInstance) {
    const refs = new ReferenceIndex();
    for (const record of app.portfolioRepository.all().values()) refs.add(record, 1);
    app.store.onChange((col, _key, prev, next) => {
      if (col !== 'portfolios') return;
      refs.add(prev as PortfolioRecord | undefined, -1);
      refs.add(next as PortfolioRecord | undefined, 1);
    });

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
      isReferenced: (sha) => refs.has(sha),
      onRemoved: (sha) => thumbnails.remove(sha),
      durable: () => app.store.idle(),
      log: { warn: (msg) => app.log.warn(msg), error: (obj, msg) => app.log.error(obj, msg) },
    });
    await thumbnails.init();

    const swept = await blobs.sweep();
    const staleThumbnails = await thumbnails.sweep((sha) => refs.has(sha));
    if (swept.temp + swept.orphans + staleThumbnails > 0) {
      app.log.info(
        `Swept ${swept.orphans} unreferenced blob(s), ${swept.temp} partial upload(s) and ` +
          `${staleThumbnails} stale thumbnail(s) left by an earlier run`,
      );
    }

    app.decorate('blobStore', blobs);
    app.decorate('thumbnails', thumbnails);
    app.addHook('onClose', async () => blobs.idle());
  },
  { name: 'blob-store', dependencies: ['storage'] },
);
