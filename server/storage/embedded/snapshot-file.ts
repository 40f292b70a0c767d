import { createHash } from 'node:crypto';
import { link, open, readFile, rename, unlink } from 'node:fs/promises';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Adapter } from 'lowdb';
import { writeFileDurably } from '../durable-file';

export type Collections = Record<string, Record<string, unknown>>;

/** The snapshot as one JSON document: how versions 1 and 2 wrote it, and what migrations take. */
export interface SnapshotData {
  /** Database schema version, for migrations. */
  version: number;
  /** The last journal sequence number whose effects this snapshot holds. */
  journalSeq: number;
  collections: Collections;
}

/** What a snapshot is written from: each collection as a Map, or as the section it was read as. */
export interface SnapshotState {
  version: number;
  journalSeq: number;
  collections: Record<string, ReadonlyMap<string, unknown> | DeferredSection>;
}

/** A snapshot read from disk: its collections parsed, or deferred (see DEFERRED_COLLECTIONS). */
export type ReadSnapshot =
  | { format: 'document'; data: SnapshotData }
  | {
      format: 'lines';
      version: number;
      journalSeq: number;
      collections: Map<string, Map<string, unknown>>;
      deferred: Map<string, DeferredSection>;
    };

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
 * Collections a snapshot keeps as a checked section that is parsed on first use rather than at
 * open: nothing answers a list from them, and past revisions (each embedding a whole record) can
 * outweigh the live portfolios. Their digest is checked at open, so a damaged section still
 * makes its generation unreadable there, and opening falls back as for any other damage. The
 * first use pays for the parse, synchronously, inside that request: the first update with
 * history, history view or retention pass after a start (about 0.2 s at 100k; docs/API.md §8).
 */
const DEFERRED_COLLECTIONS: ReadonlySet<string> = new Set(['revisions']);

/** One collection's line of a snapshot, kept unparsed until first use. */
export class DeferredSection {
  constructor(
    /** The line's UTF-8, without its newline: `{"collection":…,"entries":[[key,value],…]}`. */
    readonly bytes: Buffer,
    /** The line's length as a JavaScript string (UTF-16 code units), as the trailer gives it. */
    readonly length: number,
    readonly sha1: string,
  ) {}

  parse(): Map<string, unknown> {
    return parseSection(this.bytes.toString('utf8'));
  }
}

/**
 * lowdb adapter for the snapshot file. Writes are atomic and durable (temp + fsync + rename +
 * directory fsync) and rotate previous generations (`db.json.1`, `db.json.2`, ...). Reading
 * falls back to the newest readable generation and sets an unreadable file aside; it never
 * returns an empty database while any generation exists.
 *
 * The file (version 3 on) is lines: a header `{"version":…,"journalSeq":…,"format":"lines"}`,
 * one line per collection `{"collection":…,"entries":[[key,value],…]}`, and a trailer that
 * lists each section's length (in UTF-16 code units, as the text is read: the file is read as
 * one string, like the one-document format, so that no 100 MB buffer outlives the parse) and,
 * for deferred ones, its sha1: a file cut short or a section of another length is unreadable. Versions 1 and 2 wrote one JSON document, still read.
 */
export class SnapshotFile implements Adapter<SnapshotState> {
  constructor(
    readonly path: string,
    private readonly options: SnapshotFileOptions,
  ) {}

  generationPath(generation: number): string {
    return generation === 0 ? this.path : `${this.path}.${generation}`;
  }

  /** lowdb's read: the snapshot with each collection as a Map (deferred ones as sections). */
  async read(): Promise<SnapshotState | null> {
    const read = await this.readSnapshot();
    if (!read) return null;
    if (read.format === 'lines') {
      const collections = {
        ...Object.fromEntries(read.collections),
        ...Object.fromEntries(read.deferred),
      };
      return { version: read.version, journalSeq: read.journalSeq, collections };
    }
    const { version, journalSeq } = read.data;
    const collections = Object.entries(read.data.collections).map(
      ([name, records]) => [name, new Map(Object.entries(records))] as const,
    );
    return { version, journalSeq, collections: Object.fromEntries(collections) };
  }

  /**
   * The newest readable generation, in the format it was written in. `timings`, when given,
   * gets the ms spent reading and parsing the file that is loaded.
   */
  async readSnapshot(timings?: Record<string, number>): Promise<ReadSnapshot | null> {
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

  async write(data: SnapshotState): Promise<void> {
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

/**
 * A snapshot file as one JSON document, whichever format it is in (deferred sections parsed):
 * for tools and tests that look inside one. Null when it is unreadable.
 */
export async function readSnapshotDocument(path: string): Promise<SnapshotData | null> {
  const parsed = parseSnapshot(await readFile(path, 'utf8'));
  if (!parsed || parsed.format === 'document') return parsed?.data ?? null;
  const collections: Collections = {};
  const sections = [
    ...parsed.collections,
    ...[...parsed.deferred].map(([name, section]) => [name, section.parse()] as const),
  ];
  for (const [name, entries] of sections) collections[name] = Object.fromEntries(entries);
  return { version: parsed.version, journalSeq: parsed.journalSeq, collections };
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== 'ENOENT') throw error;
}

interface Header {
  version: number;
  journalSeq: number;
  format: 'lines';
}

interface Trailer {
  sections: { collection: string; length: number; sha1?: string }[];
}

function parseSnapshot(text: string): ReadSnapshot | null {
  try {
    const headerEnd = text.indexOf('\n');
    const header = headerEnd < 0 ? null : (JSON.parse(text.slice(0, headerEnd)) as Partial<Header>);
    if (header?.format === 'lines') return parseLines(text, headerEnd, header);
    const data = JSON.parse(text) as SnapshotData;
    const valid =
      Number.isInteger(data.version) &&
      Number.isInteger(data.journalSeq) &&
      typeof data.collections === 'object' &&
      data.collections !== null;
    return valid ? { format: 'document', data } : null;
  } catch {
    return null;
  }
}

/** Throws (caught by parseSnapshot) on anything but a whole, well-formed file. */
function parseLines(text: string, headerEnd: number, header: Partial<Header>): ReadSnapshot {
  if (!Number.isInteger(header.version) || !Number.isInteger(header.journalSeq))
    throw new Error('bad header');
  if (!text.endsWith('\n')) throw new Error('cut short');
  const trailerStart = text.lastIndexOf('\n', text.length - 2) + 1;
  const trailer = JSON.parse(text.slice(trailerStart, -1)) as Trailer;
  const collections = new Map<string, Map<string, unknown>>();
  const deferred = new Map<string, DeferredSection>();
  let start = headerEnd + 1;
  for (const { collection, length, sha1 } of trailer.sections) {
    const end = start + length;
    if (end >= trailerStart || text[end] !== '\n') throw new Error('section length');
    if (sha1 === undefined) {
      collections.set(collection, parseSection(text.slice(start, end)));
    } else {
      // Its own bytes, so that the file's text is not kept for one section.
      const section = Buffer.from(text.slice(start, end), 'utf8');
      if (digest(section) !== sha1) throw new Error('section digest');
      deferred.set(collection, new DeferredSection(section, length, sha1));
    }
    start = end + 1;
  }
  if (start !== trailerStart) throw new Error('sections do not fill the file');
  return {
    format: 'lines',
    version: header.version!,
    journalSeq: header.journalSeq!,
    collections,
    deferred,
  };
}

/** A section's entries (the section also names its collection, which the trailer gives too). */
function parseSection(text: string): Map<string, unknown> {
  const { entries } = JSON.parse(text) as { entries: [string, unknown][] };
  return new Map(entries);
}

const digest = (bytes: Buffer) => createHash('sha1').update(bytes).digest('hex');

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
 * written in the background does not stall requests. The header comes first with `journalSeq`
 * in its first bytes (see readJournalSeq); a deferred section read from the last snapshot and
 * not used since is written back as it was read.
 */
async function* serializeSnapshot(data: SnapshotState): AsyncGenerator<string | Buffer> {
  const header: Header = { version: data.version, journalSeq: data.journalSeq, format: 'lines' };
  yield `${JSON.stringify(header)}\n`;
  const trailer: Trailer = { sections: [] };
  for (const [collection, records] of Object.entries(data.collections)) {
    if (records instanceof DeferredSection) {
      yield records.bytes;
      yield '\n';
      trailer.sections.push({ collection, length: records.length, sha1: records.sha1 });
      continue;
    }
    const hash = DEFERRED_COLLECTIONS.has(collection) ? createHash('sha1') : null;
    let length = 0;
    const emit = (text: string) => {
      length += text.length;
      hash?.update(text);
      return text;
    };
    yield emit(`{"collection":${JSON.stringify(collection)},"entries":[`);
    let chunk: string[] = [];
    let first = true;
    for (const [key, value] of records) {
      chunk.push(`${first ? '' : ','}[${JSON.stringify(key)},${JSON.stringify(value)}]`);
      first = false;
      if (chunk.length === RECORDS_PER_CHUNK) {
        yield emit(chunk.join(''));
        chunk = [];
        await yieldToEventLoop();
      }
    }
    yield emit(`${chunk.join('')}]}`);
    yield '\n';
    trailer.sections.push({ collection, length, ...(hash && { sha1: hash.digest('hex') }) });
  }
  yield `${JSON.stringify(trailer)}\n`;
}
