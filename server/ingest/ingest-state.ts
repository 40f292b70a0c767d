import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { FileKind } from '../../shared';
import { writeFileDurably } from '../storage/durable-file';
import type { FoundFile } from './scan-folder';

/** What hashing and sniffing found of one file, kept while its size, time and inode stay. */
export interface KnownFile {
  size: number;
  mtimeMs: number;
  ino: number;
  sha256: string;
  /** What the bytes are; `refused` says in words why the file cannot go into a portfolio. */
  kind?: FileKind;
  refused?: string;
}

/** A project folder whose portfolio holds every file it had at the time. */
export interface DoneFolder {
  portfolioId: string;
  sha256s: string[];
}

interface StateData {
  version: 1;
  server: string;
  root: string;
  files: Record<string, KnownFile>;
  folders: Record<string, DoneFolder>;
}

/**
 * The small state of an ingest, kept between runs so an interrupted one resumes where it
 * stopped: each file's hash and kind (by its key; read again only when it changed) and the
 * project folders already ingested. Written atomically; a damaged or foreign file is ignored.
 */
export class IngestState {
  private constructor(
    readonly path: string,
    private readonly data: StateData,
  ) {}

  /** `<cache>/portfolio-manager/ingest/<hash of server and folder>.json`. */
  static defaultPath(server: string, root: string, env: NodeJS.ProcessEnv): string {
    const cache =
      env.XDG_CACHE_HOME ||
      (process.platform === 'win32' && env.LOCALAPPDATA) ||
      join(homedir(), '.cache');
    const key = createHash('sha256').update(`${server}\n${root}`).digest('hex').slice(0, 32);
    return join(cache, 'portfolio-manager', 'ingest', `${key}.json`);
  }

  static async open(path: string, server: string, root: string): Promise<IngestState> {
    const fresh: StateData = { version: 1, server, root, files: {}, folders: {} };
    const text = await readFile(path, 'utf8').catch(() => null);
    let data = fresh;
    try {
      const parsed = text === null ? null : (JSON.parse(text) as StateData);
      if (parsed?.version === 1 && parsed.server === server && parsed.root === root) data = parsed;
    } catch {
      // A state cut short or damaged: start afresh (hashing again costs time, nothing else).
    }
    return new IngestState(path, data);
  }

  known(file: FoundFile): KnownFile | undefined {
    const known = this.data.files[file.key];
    const same =
      known && known.size === file.size && known.mtimeMs === file.mtimeMs && known.ino === file.ino;
    return same ? known : undefined;
  }

  remember(file: FoundFile, found: Omit<KnownFile, 'size' | 'mtimeMs' | 'ino'>): void {
    this.data.files[file.key] = { size: file.size, mtimeMs: file.mtimeMs, ino: file.ino, ...found };
  }

  done(folder: string): DoneFolder | undefined {
    return this.data.folders[folder];
  }

  markDone(folder: string, done: DoneFolder): void {
    this.data.folders[folder] = done;
  }

  async save(): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    await writeFileDurably(this.path, [JSON.stringify(this.data)]);
  }
}
