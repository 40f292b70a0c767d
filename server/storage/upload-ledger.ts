import { mkdir, readdir, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const SHA256_HEX = /^[0-9a-f]{64}$/;
const USER_DIR = /^[0-9a-f]{2,}$/;

export interface LedgerSources {
  /** Bytes kept of a partial upload of the blob, or undefined when there is none. */
  partialSize(sha256: string): Promise<number | undefined>;
  /** The stored blob's size, or undefined when it is not stored. */
  blobSize(sha256: string): Promise<number | undefined>;
  /** Does a kept record refer to the blob (then it is no upload waiting any more)? */
  isReferenced(sha256: string): Promise<boolean>;
  /** The names of every partial upload on disk (those of no known uploader count too). */
  partials(): Promise<string[]>;
}

/** One blob an upload brought that is not attached to anything yet. */
export interface Pending {
  sha256: string;
  bytes: number;
  /** Still being uploaded (a partial), or whole and waiting for the change that uses it. */
  partial: boolean;
  /** Who uploaded it (more than one when several sent the same bytes). */
  uploaders: string[];
}

/**
 * Who uploaded which blob that nothing uses yet, kept beside the blobs so that every instance
 * sharing the blob directory sees the same: `<dir>/<uploader, hex>/<sha256>`, an empty file per
 * upload, its mtime the upload's last start. What each counts is read from the disk and the
 * database when asked (a partial's kept bytes, or an unreferenced blob's size), never stored; a
 * mark whose blob is used or gone is dropped on the way.
 */
export class UploadLedger {
  private constructor(
    readonly dir: string,
    private readonly sources: LedgerSources,
    /** A mark younger than this is kept though its upload wrote nothing yet. */
    private readonly graceMs: number,
  ) {}

  static async open(dir: string, sources: LedgerSources, graceMs: number): Promise<UploadLedger> {
    await mkdir(dir, { recursive: true });
    return new UploadLedger(dir, sources, graceMs);
  }

  /** Notes that `uploader` is sending the blob (again: its mark's time starts anew). */
  async mark(uploader: string, sha256: string): Promise<void> {
    if (!SHA256_HEX.test(sha256)) throw new Error(`Not a sha256: ${sha256}`);
    const userDir = join(this.dir, userKey(uploader));
    await mkdir(userDir, { recursive: true });
    const path = join(userDir, sha256);
    const now = new Date();
    await utimes(path, now, now).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
      await writeFile(path, '', { mode: 0o600 });
    });
  }

  /**
   * Every blob uploaded and not attached yet, with its uploaders, plus partial uploads nobody is
   * marked for (begun before marks were kept). Drops the marks of blobs now used or gone.
   */
  async pending(now = Date.now()): Promise<Pending[]> {
    const marks = new Map<string, { uploaders: string[]; newest: number }>();
    for (const key of await readdir(this.dir)) {
      if (!USER_DIR.test(key)) continue;
      const uploader = Buffer.from(key, 'hex').toString();
      for (const sha256 of await readdir(join(this.dir, key)).catch(() => [])) {
        if (!SHA256_HEX.test(sha256)) continue;
        const info = await stat(join(this.dir, key, sha256)).catch(() => undefined);
        if (!info) continue;
        const entry = marks.get(sha256) ?? { uploaders: [], newest: 0 };
        entry.uploaders.push(uploader);
        entry.newest = Math.max(entry.newest, info.mtimeMs);
        marks.set(sha256, entry);
      }
    }
    const found: Pending[] = [];
    for (const [sha256, { uploaders, newest }] of marks) {
      const counted = await this.counted(sha256);
      if (counted) found.push({ sha256, ...counted, uploaders });
      else if (counted === null || now - newest >= this.graceMs) {
        await this.unmark(sha256, uploaders);
      }
    }
    for (const sha256 of await this.sources.partials()) {
      if (marks.has(sha256)) continue;
      const bytes = await this.sources.partialSize(sha256);
      if (bytes !== undefined) found.push({ sha256, bytes, partial: true, uploaders: [] });
    }
    return found;
  }

  /**
   * What the blob counts: its partial, or the blob itself while nothing refers to it. Null when
   * it is in use (its mark can go at once), undefined when neither is on disk.
   */
  private async counted(
    sha256: string,
  ): Promise<{ bytes: number; partial: boolean } | null | undefined> {
    const kept = await this.sources.partialSize(sha256);
    if (kept !== undefined) return { bytes: kept, partial: true };
    const size = await this.sources.blobSize(sha256);
    if (size === undefined) return undefined;
    if (await this.sources.isReferenced(sha256)) return null;
    return { bytes: size, partial: false };
  }

  private async unmark(sha256: string, uploaders: string[]): Promise<void> {
    for (const uploader of uploaders) {
      await unlink(join(this.dir, userKey(uploader), sha256)).catch(() => {});
    }
  }
}

/** A directory name for any user name: its UTF-8 bytes in hex (no dots, no slashes). */
function userKey(uploader: string): string {
  return Buffer.from(uploader).toString('hex');
}
