import { mkdir, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiError } from '../errors';
import { writeFileDurably } from '../storage/durable-file';
import { loadSharp } from './load-sharp';

/** The only widths made, so a client cannot fill the disk with one thumbnail per pixel. */
import { THUMBNAIL_WIDTHS } from '../../shared';

export { THUMBNAIL_WIDTHS };
export type ThumbnailWidth = (typeof THUMBNAIL_WIDTHS)[number];

export interface ThumbnailOptions {
  /** `<dataDir>/thumbnails`. */
  dir: string;
  /** Where the source image of a blob lives. */
  sourcePath: (sha256: string) => string;
  /** Decoding refuses images above this many pixels (uploads were already checked). */
  maxPixels: number;
}

/**
 * WebP thumbnails of image blobs, cached on disk as `<sha256>-<width>.webp`. A cache entry is a
 * pure function of the blob, so a missing or damaged one is simply made again; they are removed
 * together with their blob.
 */
export class Thumbnails {
  private readonly inFlight = new Map<string, Promise<string>>();

  constructor(private readonly options: ThumbnailOptions) {}

  async init(): Promise<void> {
    await mkdir(this.options.dir, { recursive: true });
  }

  pathOf(sha256: string, width: ThumbnailWidth): string {
    return join(this.options.dir, `${sha256}-${width}.webp`);
  }

  /** The cached thumbnail's path, made first if missing; concurrent callers share one render. */
  async get(sha256: string, width: ThumbnailWidth): Promise<string> {
    const path = this.pathOf(sha256, width);
    const cached = await stat(path).catch(() => null);
    if (cached && cached.size > 0) return path;
    let making = this.inFlight.get(path);
    if (!making) {
      making = this.render(sha256, width, path).finally(() => this.inFlight.delete(path));
      this.inFlight.set(path, making);
    }
    return making;
  }

  private async render(sha256: string, width: ThumbnailWidth, path: string): Promise<string> {
    const source = this.options.sourcePath(sha256);
    const webp = await loadSharp()(source, {
      limitInputPixels: this.options.maxPixels,
      // Animated images: the first frame is the thumbnail.
      pages: 1,
    })
      .rotate() // applies the EXIF orientation, as the reported dimention does
      .resize({ width, withoutEnlargement: true })
      .webp({ quality: 80 })
      .toBuffer()
      .catch(async () => {
        // A blob that is gone is a fault; bytes sharp cannot read are the file's, not ours.
        await stat(source);
        throw new ApiError(
          'UNSUPPORTED_FILE_TYPE',
          'This image cannot be read, so it has no thumbnail.',
        );
      });
    // Atomic so a reader never sees half a file; durable so a crash cannot leave an empty one.
    await writeFileDurably(path, [webp]);
    return path;
  }

  /** Removes every cached thumbnail of a blob. */
  async remove(sha256: string): Promise<void> {
    await Promise.all(
      THUMBNAIL_WIDTHS.map((width) => unlink(this.pathOf(sha256, width)).catch(() => {})),
    );
  }

  /** Startup: drops thumbnails of blobs no longer kept, and temp files of interrupted renders. */
  async sweep(keep: (sha256: string) => boolean | Promise<boolean>): Promise<number> {
    let removed = 0;
    for (const name of await readdir(this.options.dir)) {
      const match = /^([0-9a-f]{64})-\d+\.webp$/.exec(name);
      if (match && (await keep(match[1]!))) continue;
      await unlink(join(this.options.dir, name)).catch(() => {});
      removed++;
    }
    return removed;
  }
}
