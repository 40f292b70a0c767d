import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { link, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const LOCK_FILE_NAME = 'portfolio.lock';

export class DataDirInUseError extends Error {
  override readonly name = 'DataDirInUseError';
  constructor(
    readonly dataDir: string,
    readonly ownerPid: number,
  ) {
    super(
      `The data directory ${dataDir} is in use by another Portfolio Manager process (pid ${ownerPid}). ` +
        'Stop that process, or choose another data directory.',
    );
  }
}

interface LockContent {
  pid: number;
  hostname: string;
  token: string;
  startedAt: number;
}

export interface DataDirLock {
  readonly path: string;
  release(): Promise<void>;
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readLock(path: string): Promise<LockContent | null> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as LockContent;
  } catch {
    return null;
  }
}

/**
 * Makes this process the only owner of `dataDir`. The lock file names its owner's pid; a lock
 * left by a dead process (same host) is taken over, a live owner's lock raises DataDirInUseError.
 */
export async function acquireDataDirLock(dataDir: string): Promise<DataDirLock> {
  const path = join(dataDir, LOCK_FILE_NAME);
  const mine: LockContent = {
    pid: process.pid,
    hostname: hostname(),
    token: randomBytes(12).toString('hex'),
    startedAt: Date.now(),
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    // Write the content first and hard-link it into place: the lock appears whole or not at all.
    const temp = `${path}.${mine.token}.tmp`;
    await writeFile(temp, JSON.stringify(mine), { mode: 0o600 });
    try {
      await link(temp, path);
      return { path, release: () => releaseLock(path, mine.token) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      await unlink(temp).catch(() => {});
    }
    const owner = await readLock(path);
    // Locks are linked into place whole, so an unreadable one was not written by us: abandoned.
    if (!owner || (owner.hostname === mine.hostname && !isProcessAlive(owner.pid))) {
      // Move the stale lock aside atomically; whoever renames it first takes over.
      const aside = `${path}.stale-${mine.token}`;
      await rename(path, aside).catch(() => {});
      await unlink(aside).catch(() => {});
      continue;
    }
    throw new DataDirInUseError(dataDir, owner?.pid ?? -1);
  }
  const owner = await readLock(path);
  throw new DataDirInUseError(dataDir, owner?.pid ?? -1);
}

async function releaseLock(path: string, token: string): Promise<void> {
  const current = await readLock(path);
  if (current?.token === token) await unlink(path).catch(() => {});
}
