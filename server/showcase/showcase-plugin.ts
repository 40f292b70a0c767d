import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { isRasterImage } from '../../shared';
import { Derivatives } from './derivatives';
import { ShowcaseCatalogue } from './showcase-catalogue';
import { ShowcaseSettingsStore } from './showcase-settings';

declare module 'fastify' {
  interface FastifyInstance {
    /** The public showcase (DESIGN §15): its settings, what it reads and its image derivatives. */
    showcase: {
      settings: ShowcaseSettingsStore;
      catalogue: ShowcaseCatalogue;
      derivatives: Derivatives;
    };
  }
}

/**
 * The showcase's services. Its image derivatives are made in the background after an image is
 * stored (while the showcase is on), and on demand when a visitor asks for a missing one.
 */
export default fp(
  async function showcasePlugin(app: FastifyInstance) {
    const settings = new ShowcaseSettingsStore(app.backend.settings);
    const derivatives = new Derivatives({
      dir: join(app.config.dataDir, 'showcase-media'),
      sourcePath: (sha256) => app.blobStore.pathOf(sha256),
      maxPixels: app.config.limits.imagePixels,
      maxBytes: app.config.showcase.derivativeCacheBytes,
    });
    await derivatives.init();
    app.decorate('showcase', {
      settings,
      catalogue: new ShowcaseCatalogue(app.portfolioService),
      derivatives,
    });

    app.portfolioService.onFileAdded((slot, file) => {
      if (slot === 'additionalDocument' || !file.dimention || !isRasterImage(file.mimeType)) return;
      const width = file.dimention.width;
      settings
        .get()
        .then((current) => {
          if (current.enabled) derivatives.prepare(file.sha256, width);
        })
        .catch((error: unknown) =>
          app.log.error({ err: error }, 'showcase derivatives not queued'),
        );
    });
    app.addHook('preClose', () => derivatives.idle());
  },
  { name: 'showcase', dependencies: ['storage', 'blob-store', 'portfolio-service'] },
);
