import { link, open, readFile, rename, unlink } from 'node:fs/promises';
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
        text = await readFile(candidate, 'utf8');
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
