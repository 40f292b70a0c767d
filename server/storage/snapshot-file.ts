import type { Stats } from 'node:fs';
import { link, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Adapter } from 'lowdb';
import { writeFileDurably } from './durable-file';

export type Collections = Record<string, Record<string, unknown>>;

export interface SnapshotData {
  /** Database schema version, for migrations. */
  version: number;
  /** The last journal sequence number whose effects this snapshot holds. */
  journalSeq: number;
  collections: Collections;
}

export class StorageCorruptError extends Error {
  override readonly name = 'StorageCorruptError';
}

export interface SnapshotFileOptions {
  /** How many previous generations to keep beside the current file. */
  generations: number;
  onRecovered?: (event: { setAside: string; loaded: string }) => void;
}

const RECORDS_PER_CHUNK = 500;

interface Prefetch {
  path: string;
  read: Promise<{ bytes: Buffer; stats: Stats } | null>;
}
let prefetch: Prefetch | null = null;

/**
 * Starts reading the snapshot file at `path` now, so that the disk and the thread pool read it
 * while the process is still loading its code (at 100k portfolios the file is over 100 MB). The
 * next `read` of that path takes the bytes if the file is still the one read: the directory is
 * not locked yet, and another process that owns it may have replaced the file meanwhile (and
 * dropped the journal before it). Files are only ever replaced by rename, never rewritten in
 * place, so the same inode, size and mtime is the same content; anything else is read again.
 */
export function prefetchSnapshot(path: string): void {
  const read = (async () => {
    const handle = await open(path, 'r');
    try {
      const stats = await handle.stat();
      return { bytes: await handle.readFile(), stats };
    } finally {
      await handle.close();
    }
  })();
  // Any failure (no file yet, no access) is left to `read`, which reads the file itself.
  prefetch = { path, read: read.catch(() => null) };
}

/** The prefetched bytes of `path`, if they are still that file's; taken once. */
async function takePrefetched(path: string): Promise<Buffer | null> {
  const taken = prefetch;
  if (taken?.path !== path) return null;
  prefetch = null;
  const result = await taken.read;
  if (!result) return null;
  const now = await stat(path).catch(() => null);
  const same =
    now !== null &&
    now.dev === result.stats.dev &&
    now.ino === result.stats.ino &&
    now.size === result.stats.size &&
    now.mtimeMs === result.stats.mtimeMs;
  return same ? result.bytes : null;
}

/**
 * lowdb adapter for the snapshot file. Writes are atomic and durable (temp + fsync + rename +
 * directory fsync) and rotate previous generations (`db.json.1`, `db.json.2`, ...). Reading
 * falls back to the newest readable generation and sets an unreadable file aside; it never
 * returns an empty database while any generation exists.
 */
export class SnapshotFile implements Adapter<SnapshotData> {
  constructor(
    readonly path: string,
    private readonly options: SnapshotFileOptions,
  ) {}

  generationPath(generation: number): string {
    return generation === 0 ? this.path : `${this.path}.${generation}`;
  }

  /** `timings`, when given, gets the ms spent reading and parsing the file that is loaded. */
  async read(timings?: Record<string, number>): Promise<SnapshotData | null> {
    let found = false;
    for (let generation = 0; generation <= this.options.generations; generation++) {
      const candidate = this.generationPath(generation);
      let text: string;
      const started = performance.now();
      try {
        const prefetched = generation === 0 ? await takePrefetched(candidate) : null;
        text = prefetched ? prefetched.toString('utf8') : await readFile(candidate, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      found = true;
      const read = performance.now();
      const parsed = parseSnapshot(text);
      if (timings) {
        timings.snapshotRead = Math.round(read - started);
        timings.snapshotParse = Math.round(performance.now() - read);
      }
      if (parsed) {
        if (generation > 0) this.options.onRecovered?.({ setAside: this.path, loaded: candidate });
        return parsed;
      }
      const aside = `${candidate}.corrupt-${Date.now()}`;
      await rename(candidate, aside);
    }
    if (found) {
      throw new StorageCorruptError(
        `No readable database generation in ${this.path}; the unreadable files were set aside as *.corrupt-*`,
      );
    }
    return null;
  }

  async write(data: SnapshotData): Promise<void> {
    await this.rotate();
    await writeFileDurably(this.path, serializeSnapshot(data));
  }

  /** Shift generations up by one, keeping the current file in place (hard link) until replaced. */
  private async rotate(): Promise<void> {
    const { generations } = this.options;
    if (generations < 1) return;
    await unlink(this.generationPath(generations)).catch(ignoreMissing);
    for (let generation = generations - 1; generation >= 1; generation--) {
      await rename(this.generationPath(generation), this.generationPath(generation + 1)).catch(
        ignoreMissing,
      );
    }
    await link(this.path, this.generationPath(1)).catch(ignoreMissing);
  }

  /** The journal sequence numbers of every generation on disk, read from their first bytes. */
  async generationSeqs(): Promise<number[]> {
    const seqs: number[] = [];
    for (let generation = 0; generation <= this.options.generations; generation++) {
      const seq = await readJournalSeq(this.generationPath(generation));
      if (seq !== null) seqs.push(seq);
    }
    return seqs;
  }
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== 'ENOENT') throw error;
}

function parseSnapshot(text: string): SnapshotData | null {
  try {
    const data = JSON.parse(text) as SnapshotData;
    const valid =
      Number.isInteger(data.version) &&
      Number.isInteger(data.journalSeq) &&
      typeof data.collections === 'object' &&
      data.collections !== null;
    return valid ? data : null;
  } catch {
    return null;
  }
}

async function readJournalSeq(path: string): Promise<number | null> {
  try {
    const handle = await open(path, 'r');
    try {
      const { buffer, bytesRead } = await handle.read(Buffer.alloc(128), 0, 128, 0);
      const match = /"journalSeq":(\d+)/.exec(buffer.subarray(0, bytesRead).toString('utf8'));
      return match ? Number(match[1]) : null;
    } finally {
      await handle.close();
    }
  } catch {
    return null;
  }
}

/**
 * Serializes record by record, yielding to the event loop between chunks, so a large snapshot
 * written in the background does not stall requests. `journalSeq` comes first: see readJournalSeq.
 */
async function* serializeSnapshot(data: SnapshotData): AsyncGenerator<string> {
  yield `{"version":${data.version},"journalSeq":${data.journalSeq},"collections":{`;
  let firstCollection = true;
  for (const [name, records] of Object.entries(data.collections)) {
    yield `${firstCollection ? '' : ','}${JSON.stringify(name)}:{`;
    firstCollection = false;
    let chunk: string[] = [];
    let firstRecord = true;
    for (const key in records) {
      chunk.push(`${firstRecord ? '' : ','}${JSON.stringify(key)}:${JSON.stringify(records[key])}`);
      firstRecord = false;
      if (chunk.length === RECORDS_PER_CHUNK) {
        yield chunk.join('');
        chunk = [];
        await yieldToEventLoop();
      }
    }
    yield `${chunk.join('')}}`;
  }
  yield '}}';
}
