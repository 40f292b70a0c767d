import type { Dirent } from 'node:fs';
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';

/** A file of a project folder that may go into its portfolio. */
export interface FoundFile {
  /** Absolute path. */
  path: string;
  /** Path relative to the ingested folder, with "/" between parts: the state file's key. */
  key: string;
  /** Path relative to its project folder: the file's name in the portfolio. */
  name: string;
  size: number;
  mtimeMs: number;
  ino: number;
}

/** One sub-folder of the ingested folder: one portfolio. */
export interface ProjectFolder {
  /** The sub-folder's name: the portfolio's title unless portfolio.json says otherwise. */
  name: string;
  path: string;
  /** `portfolio.json` at its top, when there is one. */
  metaPath: string | null;
  /** Sorted by name (numbers in names in their order: 2 before 10). */
  files: FoundFile[];
}

export interface Skipped {
  key: string;
  reason: SkipReason;
}

/** Why a file or folder is left out, in words a curator reads. */
export const SKIP_REASONS = {
  empty: 'empty file',
  hidden: 'hidden file or folder',
  loose: 'not inside a project folder (each sub-folder is one portfolio)',
  folderLink: 'link to a folder (links to folders are not followed)',
  outside: 'link pointing outside the folder',
  brokenLink: 'link to nothing',
  unreadable: 'cannot be read (no permission)',
  special: 'not a regular file',
  tooDeep: 'folder nested too deep',
  visited: 'folder already walked (reached twice)',
} as const;
export type SkipReason = (typeof SKIP_REASONS)[keyof typeof SKIP_REASONS] | string;

export interface Scan {
  root: string;
  folders: ProjectFolder[];
  skipped: Skipped[];
}

export const META_FILE = 'portfolio.json';
/** Walking stops with an error beyond this many entries: a mistaken folder (a whole disk). */
export const MAX_ENTRIES = 200_000;
const MAX_DEPTH = 16;

export class ScanError extends Error {
  override readonly name = 'ScanError';
}

const byName = (a: string, b: string) =>
  a.localeCompare(b, 'en', { numeric: true, sensitivity: 'base' }) || (a < b ? -1 : a > b ? 1 : 0);

/**
 * Walks the ingested folder: each sub-folder (not a link) is a project, walked to any depth.
 * Links to files are taken when they point inside the folder; links to folders are never
 * followed, and a folder reached twice (by a bind mount, say) is walked once, so no walk can
 * loop. Empty, hidden and special files are left out with their reason.
 */
export async function scanFolder(dir: string): Promise<Scan> {
  const info = await stat(dir).catch(() => null);
  if (!info?.isDirectory()) throw new ScanError(`"${dir}" is not a folder`);
  const root = await realpath(dir);
  const scan: Scan = { root, folders: [], skipped: [] };
  const walk = new Walk(root, scan.skipped);
  for (const entry of await walk.entries(root)) {
    const path = join(root, entry.name);
    if (entry.name.startsWith('.')) {
      walk.skip(path, SKIP_REASONS.hidden);
    } else if (entry.isDirectory()) {
      const files: FoundFile[] = [];
      await walk.folder(path, path, files, 1);
      const meta = files.find((file) => file.name === META_FILE) ?? null;
      scan.folders.push({
        name: entry.name,
        path,
        metaPath: meta?.path ?? null,
        files: files.filter((file) => file !== meta).sort((a, b) => byName(a.name, b.name)),
      });
    } else if (entry.isSymbolicLink() && (await stat(path).catch(() => null))?.isDirectory()) {
      walk.skip(path, SKIP_REASONS.folderLink);
    } else {
      walk.skip(path, SKIP_REASONS.loose);
    }
  }
  scan.folders.sort((a, b) => byName(a.name, b.name));
  return scan;
}

class Walk {
  private count = 0;
  private readonly visited = new Set<string>();

  constructor(
    private readonly root: string,
    private readonly skipped: Skipped[],
  ) {}

  keyOf(path: string): string {
    return relative(this.root, path).split(sep).join('/');
  }

  skip(path: string, reason: SkipReason): void {
    this.skipped.push({ key: this.keyOf(path), reason });
  }

  async entries(path: string): Promise<Dirent[]> {
    const entries = await readdir(path, { withFileTypes: true });
    this.count += entries.length;
    if (this.count > MAX_ENTRIES) {
      throw new ScanError(
        `the folder holds more than ${MAX_ENTRIES} files and folders; ingest a smaller folder`,
      );
    }
    return entries;
  }

  async folder(path: string, project: string, files: FoundFile[], depth: number): Promise<void> {
    const info = await stat(path);
    const id = `${info.dev}:${info.ino}`;
    if (this.visited.has(id)) return this.skip(path, SKIP_REASONS.visited);
    this.visited.add(id);
    if (depth > MAX_DEPTH) return this.skip(path, SKIP_REASONS.tooDeep);
    let entries: Dirent[];
    try {
      entries = await this.entries(path);
    } catch (error) {
      if (error instanceof ScanError) throw error;
      return this.skip(path, SKIP_REASONS.unreadable);
    }
    for (const entry of entries) {
      const child = join(path, entry.name);
      if (entry.name.startsWith('.')) this.skip(child, SKIP_REASONS.hidden);
      else if (entry.isDirectory()) await this.folder(child, project, files, depth + 1);
      else if (entry.isSymbolicLink()) await this.link(child, project, files);
      else if (entry.isFile()) await this.file(child, child, project, files);
      else this.skip(child, SKIP_REASONS.special);
    }
  }

  private async link(path: string, project: string, files: FoundFile[]): Promise<void> {
    const target = await realpath(path).catch(() => null);
    const info = target && (await stat(target).catch(() => null));
    if (!target || !info) return this.skip(path, SKIP_REASONS.brokenLink);
    if (info.isDirectory()) return this.skip(path, SKIP_REASONS.folderLink);
    const inside = relative(this.root, target);
    if (inside.startsWith('..') || inside === '' || /^[a-zA-Z]:|^[\\/]/.test(inside)) {
      return this.skip(path, SKIP_REASONS.outside);
    }
    if (!info.isFile()) return this.skip(path, SKIP_REASONS.special);
    await this.file(path, target, project, files);
  }

  private async file(
    path: string,
    target: string,
    project: string,
    files: FoundFile[],
  ): Promise<void> {
    const info = await lstat(target).catch(() => null);
    if (!info) return this.skip(path, SKIP_REASONS.unreadable);
    if (info.size === 0) return this.skip(path, SKIP_REASONS.empty);
    files.push({
      path: target,
      key: this.keyOf(path),
      name: relative(project, path).split(sep).join('/'),
      size: info.size,
      mtimeMs: info.mtimeMs,
      ino: info.ino,
    });
  }
}
