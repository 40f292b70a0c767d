import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { extname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ApiError } from '../errors';
import { Lru } from '../lib/lru';
import { assertComplete, inspectFile, type Inspection } from './inspect-file';

/**
 * What the server knows of a stored blob from its bytes alone (DESIGN §5): every file field a
 * record keeps but the name, the description and the times. A sync mutation, an import or an
 * ingest names a blob by its sha256; the file object is then built from these facts, never from
 * metadata a client made.
 */
export interface BlobFacts extends Inspection {
  size: number;
  md5: string;
}

export interface BlobFactsOptions {
  /** Where the blob of a sha256 lives. */
  pathOf: (sha256: string) => string;
  /** Most pixels allowed in an image, as for uploads. */
  maxPixels: number;
  /** Facts remembered (a blob never changes, so they never go stale). */
  cacheEntries?: number;
}

/** The last bytes read for an image's end marker (see `assertComplete`). */
const TAIL_BYTES = 64 * 1024;

/**
 * Reads blobs' facts, once per blob: md5 over the bytes, the sniffed type and an image's size
 * from its header. Concurrent readers of one blob share one read. A refusal (empty, damaged,
 * too many pixels) is an ApiError, as an upload of the same bytes would get.
 */
export class BlobFactsReader {
  private readonly known: Lru<Promise<BlobFacts>>;

  constructor(private readonly options: BlobFactsOptions) {
    this.known = new Lru(options.cacheEntries ?? 2000);
  }

  /**
   * The facts of one blob. `clientName` tells legacy Office formats and CSV apart, as it does for
   * an upload: the same bytes named `a.doc` or `a.xls` are different files.
   */
  of(sha256: string, clientName: string): Promise<BlobFacts> {
    const key = `${sha256}:${nameHint(clientName)}`;
    let facts = this.known.use(key);
    if (!facts) {
      facts = this.read(sha256, clientName);
      this.known.put(key, facts);
      // A failure (a missing blob, a refused image) is not remembered: the blob may arrive later.
      facts.catch(() => this.known.delete(key));
    }
    return facts;
  }

  private async read(sha256: string, clientName: string): Promise<BlobFacts> {
    const path = this.options.pathOf(sha256);
    const { size, tail } = await sizeAndTail(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') throw new ApiError('BLOB_NOT_FOUND', `No blob ${sha256} here.`);
      throw error;
    });
    const [md5, inspection] = await Promise.all([
      md5Of(path),
      inspectFile(path, { size, tail, maxPixels: this.options.maxPixels, clientName }),
    ]);
    return { ...assertComplete(inspection, tail), size, md5 };
  }
}

/** The part of a name that changes what its bytes are taken for: its extension. */
function nameHint(clientName: string): string {
  return extname(clientName).slice(1).toLowerCase();
}

async function sizeAndTail(path: string): Promise<{ size: number; tail: Buffer }> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, TAIL_BYTES);
    const tail = Buffer.alloc(length);
    if (length > 0) await handle.read(tail, 0, length, size - length);
    return { size, tail };
  } finally {
    await handle.close();
  }
}

async function md5Of(path: string): Promise<string> {
  const hash = createHash('md5');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}
