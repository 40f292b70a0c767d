import { mkdir, readdir, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Sharp } from 'sharp';
import { SerialQueue } from '../lib/serial-queue';
import { tempPathFor } from '../storage/durable-file';
import { loadSharp } from '../media/load-sharp';

/** The widths the showcase serves (CSS pixels of a phone, a tablet, a desktop column). */
export const DERIVATIVE_WIDTHS = [320, 640, 1280] as const;

export type DerivativeFormat = 'avif' | 'webp';

export const DERIVATIVE_TYPES: Record<DerivativeFormat, string> = {
  avif: 'image/avif',
  webp: 'image/webp',
};

/** AVIF where this build of sharp can write it (it needs libheif with an AV1 encoder), then WebP. */
export function derivativeFormats(): DerivativeFormat[] {
  const heif = loadSharp().format.heif as { output?: { alias?: string[] } } | undefined;
  return heif?.output?.alias?.includes('avif') ? ['avif', 'webp'] : ['webp'];
}

/** The widths made of an image `imageWidth` pixels wide: none larger than it, at least one. */
export function widthsFor(imageWidth: number): number[] {
  const fitting = DERIVATIVE_WIDTHS.filter((width) => width <= imageWidth);
  return fitting.length > 0 ? fitting : [DERIVATIVE_WIDTHS[0]];
}

export interface DerivativeOptions {
  /** `<dataDir>/showcase-media`. */
  dir: string;
  /** Where the source image of a blob lives. */
  sourcePath: (sha256: string) => string;
  /** Decoding refuses images above this many pixels (uploads were already checked). */
  maxPixels: number;
  /** Bytes kept on disk; beyond it the least recently used derivatives are removed. */
  maxBytes: number;
}

const NAME = /^([0-9a-f]{64})-(\d+)\.(avif|webp)$/;

function encode(image: Sharp, format: DerivativeFormat): Sharp {
  // Effort traded for speed: a derivative is made while a visitor may be waiting for it.
  return format === 'avif' ? image.avif({ quality: 55, effort: 2 }) : image.webp({ quality: 78 });
}

/**
 * Resized copies of public images (DESIGN §15), each made once per sha256, width and format and
 * kept on disk under a size bound, the least recently used removed first. A derivative is a pure
 * function of its blob, so a missing one is simply made again.
 */
export class Derivatives {
  /** Name → bytes, least recently used first. */
  private readonly kept = new Map<string, number>();
  private keptBytes = 0;
  private readonly inFlight = new Map<string, Promise<string>>();
  private readonly background = new SerialQueue();

  constructor(private readonly options: DerivativeOptions) {}

  /** Takes in what an earlier run left, oldest first, and removes temp files of cut renders. */
  async init(): Promise<void> {
    await mkdir(this.options.dir, { recursive: true });
    const found: { name: string; size: number; used: number }[] = [];
    for (const name of await readdir(this.options.dir)) {
      const path = join(this.options.dir, name);
      if (!NAME.test(name)) {
        await unlink(path).catch(() => {});
        continue;
      }
      const facts = await stat(path).catch(() => null);
      if (facts) found.push({ name, size: facts.size, used: facts.mtimeMs });
    }
    found.sort((a, b) => a.used - b.used);
    for (const { name, size } of found) this.remember(name, size);
    await this.evict();
  }

  /** Bytes on disk now. */
  get bytes(): number {
    return this.keptBytes;
  }

  /** How many derivatives are on disk now. */
  get count(): number {
    return this.kept.size;
  }

  pathOf(sha256: string, width: number, format: DerivativeFormat): string {
    return join(this.options.dir, `${sha256}-${width}.${format}`);
  }

  /** The derivative's path, made first if missing; concurrent callers share one render. */
  async get(sha256: string, width: number, format: DerivativeFormat): Promise<string> {
    const name = `${sha256}-${width}.${format}`;
    const size = this.kept.get(name);
    if (size !== undefined) {
      this.kept.delete(name);
      this.kept.set(name, size);
      return join(this.options.dir, name);
    }
    let making = this.inFlight.get(name);
    if (!making) {
      making = this.renderAll(sha256, [width], [format])
        .then(() => join(this.options.dir, name))
        .finally(() => this.inFlight.delete(name));
      this.inFlight.set(name, making);
    }
    return making;
  }

  /**
   * Makes every derivative of an image in the background, one image at a time, so an upload
   * never waits for it; what exists already is not made again.
   */
  prepare(sha256: string, imageWidth: number): void {
    void this.background
      .run(async () => {
        const formats = derivativeFormats();
        const widths = widthsFor(imageWidth).filter((width) =>
          formats.some((format) => !this.kept.has(`${sha256}-${width}.${format}`)),
        );
        if (widths.length > 0) await this.renderAll(sha256, widths, formats);
      })
      .catch(() => {}); // made again on demand, which reports what went wrong
  }

  /** Resolves once no background work is queued or running. */
  idle(): Promise<void> {
    return this.background.idle();
  }

  /** One decode of the source, every asked width and format encoded from it. */
  private async renderAll(
    sha256: string,
    widths: number[],
    formats: DerivativeFormat[],
  ): Promise<void> {
    const source = loadSharp()(this.options.sourcePath(sha256), {
      limitInputPixels: this.options.maxPixels,
      pages: 1, // animated images: the first frame
    }).rotate(); // the EXIF orientation, as the reported dimention has it
    await Promise.all(
      widths.flatMap((width) =>
        formats.map(async (format) => {
          const bytes = await encode(
            source.clone().resize({ width, withoutEnlargement: true }),
            format,
          ).toBuffer();
          const name = `${sha256}-${width}.${format}`;
          const path = join(this.options.dir, name);
          // Renamed into place: a reader never sees half a file. Not fsync'd: it is a cache.
          const temp = tempPathFor(path);
          await writeFile(temp, bytes);
          await rename(temp, path);
          this.remember(name, bytes.length);
        }),
      ),
    );
    await this.evict();
  }

  private remember(name: string, size: number): void {
    const before = this.kept.get(name);
    if (before !== undefined) this.keptBytes -= before;
    this.kept.delete(name);
    this.kept.set(name, size);
    this.keptBytes += size;
  }

  private async evict(): Promise<void> {
    while (this.keptBytes > this.options.maxBytes && this.kept.size > 0) {
      const [oldest, size] = this.kept.entries().next().value!;
      this.kept.delete(oldest);
      this.keptBytes -= size;
      await unlink(join(this.options.dir, oldest)).catch(() => {});
    }
  }
}
