import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { link, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const LOCK_FILE_NAME = 'portfolio.lock';

/** How long a live holder is given to exit (a server still shutting down) before giving up. */
export const DEFAULT_HOLDER_WAIT_MS = 3000;
const POLL_MS = 50;
/** Stale locks taken over in one acquisition before giving up (other processes racing us). */
const MAX_TAKEOVERS = 3;

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
  /** Kernel boot id: a lock from before a reboot is stale whatever its pid. Absent off Linux. */
  bootId?: string;
  /** The process's start time in clock ticks since boot (/proc/<pid>/stat field 22): tells a
   *  reused pid from the holder. Absent off Linux. */
  processStart?: string;
}

export interface DataDirLock {
  readonly path: string;
  release(): Promise<void>;
}

export interface AcquireOptions {
  /** How long to wait for a live holder to go away before DataDirInUseError. */
  holderWaitMs?: number;
}

/** What /proc/<pid>/stat says about a process: its state letter and start time. */
export interface ProcessStat {
  state: string;
  startTime: string;
}

const PROC_STAT_START_TIME_FIELD = 22;

/** Parses /proc/<pid>/stat. The command name (field 2) is in parentheses and may itself hold
 *  spaces and parentheses, so the fields are counted from the last ')'. */
export function parseProcStat(text: string): ProcessStat | null {
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  const fields = text.slice(close + 2).split(' '); // fields 3, 4, ...
  const state = fields[0];
  const startTime = fields[PROC_STAT_START_TIME_FIELD - 3];
  return state && startTime ? { state, startTime } : null;
}

interface OwnIdentity {
  /** Whether this platform has /proc/<pid>/stat. */
  hasProc: boolean;
  bootId?: string;
  processStart?: string;
}

let ownIdentity: Promise<OwnIdentity> | undefined;

function readOptional(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').catch(() => undefined);
}

/** This process's boot id and start time, where the platform exposes them. */
function identityOfThisProcess(): Promise<OwnIdentity> {
  ownIdentity ??= Promise.all([
    readOptional('/proc/sys/kernel/random/boot_id'),
    readOptional('/proc/self/stat'),
  ]).then(([bootId, stat]) => {
    const self = stat === undefined ? null : parseProcStat(stat);
    return {
      hasProc: self !== null,
      bootId: bootId?.trim() || undefined,
      processStart: self?.startTime,
    };
  });
  return ownIdentity;
}

/** The process's stat, or null when no process has that pid. */
async function readProcessStat(pid: number): Promise<ProcessStat | null> {
  const text = await readOptional(`/proc/${pid}/stat`);
  return text === undefined ? null : parseProcStat(text);
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

type HolderState = 'stale' | 'live' | 'self';

/**
 * Whether the recorded owner (on this host) still holds the lock. Stale: written during another
 * boot (the lock predates a reboot), a gone pid, a zombie or exiting process (Z, X: it runs no
 * code and holds no files), or a pid now used by a process that started at another time.
 */
async function holderState(owner: LockContent, own: OwnIdentity): Promise<HolderState> {
  if (owner.bootId && own.bootId && owner.bootId !== own.bootId) return 'stale';
  if (own.hasProc) {
    const stat = await readProcessStat(owner.pid);
    if (!stat || stat.state === 'Z' || stat.state === 'X') return 'stale';
    if (owner.processStart && owner.processStart !== stat.startTime) return 'stale';
  } else if (!isProcessAlive(owner.pid)) {
    return 'stale';
  }
  return owner.pid === process.pid ? 'self' : 'live';
}

async function readLock(path: string): Promise<LockContent | null> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as LockContent;
  } catch {
    return null;
  }
}

/**
 * Makes this process the only owner of `dataDir`. The lock file names its owner by pid, boot id
 * and process start time; a stale lock (see holderState) on this host is taken over. A live
 * owner is polled for `holderWaitMs` (it may be shutting down) before DataDirInUseError.
 */
export async function acquireDataDirLock(
  dataDir: string,
  options: AcquireOptions = {},
): Promise<DataDirLock> {
  const path = join(dataDir, LOCK_FILE_NAME);
  const own = await identityOfThisProcess();
  const { bootId, processStart } = own;
  const mine: LockContent = {
    pid: process.pid,
    hostname: hostname(),
    token: randomBytes(12).toString('hex'),
    startedAt: Date.now(),
    ...(bootId && { bootId }),
    ...(processStart && { processStart }),
  };
  const giveUpAt = Date.now() + (options.holderWaitMs ?? DEFAULT_HOLDER_WAIT_MS);
  let takeovers = 0;
  for (;;) {
    if (await tryLink(path, mine)) return { path, release: () => releaseLock(path, mine.token) };
    const owner = await readLock(path);
    // Locks are linked into place whole, so an unreadable one was not written by us: abandoned.
    const state = !owner
      ? 'stale'
      : owner.hostname === mine.hostname
        ? await holderState(owner, own)
        : 'live';
    if (state === 'stale' && takeovers++ < MAX_TAKEOVERS) {
      await moveAside(path, mine.token, owner?.token);
      continue;
    }
    // Our own process cannot be on its way out; another may be finishing its shutdown.
    if (state !== 'live' || Date.now() >= giveUpAt) {
      throw new DataDirInUseError(dataDir, owner?.pid ?? -1);
    }
    await sleep(POLL_MS);
  }
}

/** Writes the content first and hard-links it into place: the lock appears whole or not at all. */
async function tryLink(path: string, content: LockContent): Promise<boolean> {
  const temp = `${path}.${content.token}.tmp`;
  await writeFile(temp, JSON.stringify(content), { mode: 0o600 });
  try {
    await link(temp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return false;
  } finally {
    await unlink(temp).catch(() => {});
  }
}

/**
 * Moves a stale lock aside atomically; whoever renames it first takes over. Should a racing
 * process have replaced the stale lock with its own meanwhile, that fresh lock is put back.
 */
async function moveAside(path: string, token: string, staleToken?: string): Promise<void> {
  const aside = `${path}.stale-${token}`;
  if (
    !(await rename(path, aside).then(
      () => true,
      () => false,
    ))
  )
    return;
  const moved = await readLock(aside);
  if (moved && moved.token !== staleToken) await link(aside, path).catch(() => {});
  await unlink(aside).catch(() => {});
}

async function releaseLock(path: string, token: string): Promise<void> {
  const current = await readLock(path);
  if (current?.token === token) await unlink(path).catch(() => {});
}
