import { constants } from 'node:fs';
import { open, readdir, readFile, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { syncDirectory } from '../durable-file';

export type Op =
  | { type: 'put'; col: string; key: string; value: unknown; embed?: Embed }
  | { type: 'del'; col: string; key: string };

/**
 * A put whose value holds, as `field`, the record stored at `col`/`key` when the commit starts
 * (the same object; no earlier op of the commit may change it). The journal writes the value
 * without that field, and replay puts it back from the state it has rebuilt by then, so a record
 * that is already on disk is not written out a second time.
 */
export interface Embed {
  field: string;
  col: string;
  key: string;
}

export interface JournalEntry {
  seq: number;
  ops: Op[];
}

/**
 * On Linux, segments are opened O_DSYNC: a write then returns once its bytes are durable, as a
 * write and an fdatasync do (the same sync of the file's range, disk cache flush included), but in
 * one threadpool job instead of two. Under load each job's completion waits for a turn of a busy
 * event loop (a list request or more per connection), so the second job doubled an update's wait
 * for its journal line. Not on macOS: there libuv's fdatasync is F_FULLFSYNC, which O_DSYNC is not.
 */
const DSYNC = process.platform === 'linux' ? constants.O_DSYNC : undefined;
const SEGMENT_FLAGS =
  DSYNC === undefined ? 'w' : constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | DSYNC;

const SEGMENT_PATTERN = /^journal-(\d{12})\.ndjson$/;
const segmentName = (firstSeq: number) => `journal-${String(firstSeq).padStart(12, '0')}.ndjson`;

interface Segment {
  firstSeq: number;
  path: string;
}

/**
 * Append-only write-ahead journal in numbered segment files, one JSON line per committed batch.
 * A line counts only when it is complete (ends in a newline and parses); a torn tail left by a
 * crash was never acknowledged, and is cut off on open.
 */
export class Journal {
  private handle: FileHandle | null = null;
  /** Where the next write goes: the end of every write called so far. */
  private offset = 0;
  /** The start of the first write that failed since the last `cutBack`. */
  private failedAt: number | null = null;
  private faults: Error[] = [];

  constructor(private readonly dir: string) {}

  async segments(): Promise<Segment[]> {
    const names = await readdir(this.dir);
    return names
      .map((name) => SEGMENT_PATTERN.exec(name))
      .filter((match): match is RegExpExecArray => match !== null)
      .map((match) => ({ firstSeq: Number(match[1]), path: join(this.dir, match[0]) }))
      .sort((a, b) => a.firstSeq - b.firstSeq);
  }

  /**
   * Reads every complete entry after `afterSeq`, in order; returns them and their bytes. A
   * segment wholly at or before `afterSeq` (kept for older snapshot generations) is not read, and
   * a line at or before it is not parsed: the snapshot already holds their effects.
   */
  async replay(
    afterSeq: number,
    onCorrupt: (message: string) => void,
  ): Promise<{ entries: JournalEntry[]; bytes: number }> {
    const entries: JournalEntry[] = [];
    let bytes = 0;
    const segments = await this.segments();
    for (const [index, segment] of segments.entries()) {
      const next = segments[index + 1];
      if (next && next.firstSeq - 1 <= afterSeq) continue;
      const text = await readFile(segment.path, 'utf8');
      let start = 0;
      while (start < text.length) {
        const end = text.indexOf('\n', start);
        const line = end === -1 ? null : text.slice(start, end);
        const seq = line === null ? null : seqOf(line);
        if (seq !== null && seq <= afterSeq) {
          start = end + 1;
          continue;
        }
        const entry = line === null ? null : parseEntry(line);
        if (!entry) {
          const isLast = index === segments.length - 1;
          if (isLast) {
            // A torn tail from a crash mid-write: never acknowledged, so cut it off.
            await truncateFile(segment.path, Buffer.byteLength(text.slice(0, start)));
          } else {
            onCorrupt(`Unreadable journal line in ${segment.path} at byte ${start}; skipped`);
          }
          if (isLast || end === -1) break;
          start = end + 1;
          continue;
        }
        bytes += Buffer.byteLength(line!) + 1;
        if (entry.seq > afterSeq) entries.push(entry);
        start = end + 1;
      }
    }
    return { entries, bytes };
  }

  /** Starts a new segment; entries from `firstSeq` on go there. */
  async startSegment(firstSeq: number): Promise<void> {
    await this.handle?.close();
    this.handle = await open(join(this.dir, segmentName(firstSeq)), SEGMENT_FLAGS, 0o600);
    this.offset = 0;
    this.failedAt = null;
    await syncDirectory(this.dir);
  }

  /**
   * Appends lines and makes them durable (one write, and except on Linux one fdatasync, for the
   * whole group). The bytes are placed at once, before the first await, so several writes may run
   * at a time, each after the one called before it. A failed write leaves its bytes, and those of
   * any write called after it, to `cutBack`, once none of them is running.
   */
  async write(text: string): Promise<number> {
    if (!this.handle) throw new Error('journal is not open');
    const handle = this.handle;
    const buffer = Buffer.from(text, 'utf8');
    const start = this.offset;
    this.offset += buffer.length;
    try {
      const fault = this.faults.shift();
      if (fault) throw fault;
      let written = 0;
      while (written < buffer.length) {
        const { bytesWritten } = await handle.write(
          buffer,
          written,
          buffer.length - written,
          start + written,
        );
        written += bytesWritten;
      }
      if (DSYNC === undefined) await handle.datasync();
    } catch (error) {
      this.failedAt = Math.min(this.failedAt ?? start, start);
      throw error;
    }
    return buffer.length;
  }

  /**
   * Cuts off whatever reached the file from the first failed write on, so that the next write
   * follows good data. Call it once no write is running.
   */
  async cutBack(): Promise<void> {
    if (this.failedAt === null) return;
    this.offset = this.failedAt;
    this.failedAt = null;
    await this.handle?.truncate(this.offset).catch(() => {});
  }

  /** Removes segments whose every entry is at or before `seq`. */
  async removeSegmentsThrough(seq: number): Promise<void> {
    const segments = await this.segments();
    for (let index = 0; index < segments.length - 1; index++) {
      const lastSeqOfSegment = segments[index + 1]!.firstSeq - 1;
      if (lastSeqOfSegment <= seq) await unlink(segments[index]!.path).catch(() => {});
    }
  }

  /** Test seam: the next write fails with `error`, as a full disk would. */
  injectFault(error: Error): void {
    this.faults.push(error);
  }

  async close(): Promise<void> {
    await this.handle?.close();
    this.handle = null;
  }
}

/** The sequence number at the start of a line written by serializeEntry, without parsing it. */
function seqOf(line: string): number | null {
  const match = /^\{"s":(\d+),/.exec(line);
  return match ? Number(match[1]) : null;
}

function parseEntry(line: string): JournalEntry | null {
  try {
    const entry = JSON.parse(line) as { s: number; o: Op[] };
    return Number.isInteger(entry.s) && Array.isArray(entry.o)
      ? { seq: entry.s, ops: entry.o }
      : null;
  } catch {
    return null;
  }
}

export function serializeEntry(entry: JournalEntry): string {
  const ops = entry.ops.map((op) =>
    op.type === 'put' && op.embed
      ? { ...op, value: { ...(op.value as object), [op.embed.field]: undefined } } // left out
      : op,
  );
  return `${JSON.stringify({ s: entry.seq, o: ops })}\n`;
}

/** Replay: the value of a journaled put, its embedded record (if any) taken from `records`. */
export function replayedValue(
  op: Extract<Op, { type: 'put' }>,
  records: (col: string, key: string) => unknown,
): unknown {
  if (!op.embed) return op.value;
  return { ...(op.value as object), [op.embed.field]: records(op.embed.col, op.embed.key) };
}

async function truncateFile(path: string, length: number): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.truncate(length);
    await handle.sync();
  } finally {
    await handle.close();
  }
}
