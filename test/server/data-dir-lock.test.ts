import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  acquireDataDirLock,
  DataDirInUseError,
  LOCK_FILE_NAME,
  parseProcStat,
  type DataDirLock,
} from '../../server/storage/embedded/data-dir-lock';
import { makeTempDir } from '../helpers/test-server';

const CHILD = 'test/server/data-dir-lock-child.ts';
const hasProc = await readFile('/proc/self/stat', 'utf8').then(
  () => true,
  () => false,
);

const children: ChildProcess[] = [];
const locks: DataDirLock[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const lock of locks.splice(0)) await lock.release();
});

function track(child: ChildProcess): ChildProcess {
  children.push(child);
  return child;
}

/** Resolves with the pid the child prints once it owns the lock. */
function lockedPid(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /LOCKED (\d+)/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`lock child exited (${code}) before locking`)));
  });
}

function spawnHolder(dataDir: string, shutdownMs = 0): ChildProcess {
  return track(
    spawn(process.execPath, ['--import', 'tsx', CHILD, dataDir, String(shutdownMs)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
}

async function acquire(dataDir: string, holderWaitMs?: number): Promise<DataDirLock> {
  const lock = await acquireDataDirLock(dataDir, { holderWaitMs });
  locks.push(lock);
  return lock;
}

async function lockOwner(dataDir: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(join(dataDir, LOCK_FILE_NAME), 'utf8'));
}

async function procState(pid: number): Promise<string | undefined> {
  return parseProcStat(await readFile(`/proc/${pid}/stat`, 'utf8'))?.state;
}

describe('data directory lock against real processes', () => {
  it('restarts at once after the holder is killed with SIGKILL', async () => {
    const dataDir = await makeTempDir();
    const holder = spawnHolder(dataDir);
    const pid = await lockedPid(holder);
    expect((await lockOwner(dataDir)).pid).toBe(pid);
    holder.kill('SIGKILL');
    // No wait for the exit event: the pid is still running or a zombie not yet reaped.
    await acquire(dataDir);
    expect((await lockOwner(dataDir)).pid).toBe(process.pid);
  });

  it.runIf(hasProc)('takes over from a zombie at once, without waiting', async () => {
    const dataDir = await makeTempDir();
    // The shell starts the holder in the background and becomes `sleep`, which never reaps it.
    const parent = track(
      spawn(
        'sh',
        ['-c', `"$0" --import tsx ${CHILD} "$1" & exec sleep 60`, process.execPath, dataDir],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      ),
    );
    const pid = await lockedPid(parent);
    process.kill(pid, 'SIGKILL');
    await expect.poll(() => procState(pid)).toBe('Z');
    await acquire(dataDir, 0);
    expect((await lockOwner(dataDir)).pid).toBe(process.pid);
  });

  it('waits for a holder that is shutting down, and gives up on one that stays', async () => {
    const dataDir = await makeTempDir();
    const holder = spawnHolder(dataDir, 500);
    const pid = await lockedPid(holder);
    // A holder that stays: refused once the wait is over, its lock untouched.
    const refused = await acquire(dataDir, 200).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DataDirInUseError);
    expect((refused as DataDirInUseError).ownerPid).toBe(pid);
    expect((await lockOwner(dataDir)).pid).toBe(pid);
    // A holder asked to stop takes 500 ms to let go: without a wait that is "in use"...
    holder.kill('SIGTERM');
    await expect(acquire(dataDir, 0)).rejects.toBeInstanceOf(DataDirInUseError);
    // ...and with the default wait the restart succeeds.
    await acquire(dataDir);
    expect((await lockOwner(dataDir)).pid).toBe(process.pid);
  });

  it.runIf(hasProc)('treats a live pid with another start time or boot id as reused', async () => {
    const sleeper = track(spawn('sleep', ['60'], { stdio: 'ignore' }));
    const pid = sleeper.pid!;
    const real = await readFile(`/proc/${pid}/stat`, 'utf8').then(parseProcStat);
    const bootId = (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();
    const base = { pid, hostname: hostname(), token: 'old', startedAt: 1 };

    const writeLock = async (fields: object) => {
      const dataDir = await makeTempDir();
      await writeFile(join(dataDir, LOCK_FILE_NAME), JSON.stringify({ ...base, ...fields }));
      return dataDir;
    };
    // The recorded identity matches the live process: it holds the lock.
    const held = await writeLock({ bootId, processStart: real!.startTime });
    await expect(acquire(held, 100)).rejects.toBeInstanceOf(DataDirInUseError);
    // Same pid, but started at another time (the pid was reused): stale.
    const reused = await writeLock({ bootId, processStart: String(Number(real!.startTime) + 1) });
    await acquire(reused, 0);
    expect((await lockOwner(reused)).pid).toBe(process.pid);
    // Written before a reboot: stale whatever the pid.
    const rebooted = await writeLock({ bootId: 'another-boot', processStart: real!.startTime });
    await acquire(rebooted, 0);
    expect((await lockOwner(rebooted)).pid).toBe(process.pid);
  });

  it('records the boot id and start time that identify this process', async () => {
    const dataDir = await makeTempDir();
    await acquire(dataDir);
    const owner = await lockOwner(dataDir);
    expect(owner.pid).toBe(process.pid);
    if (hasProc) {
      const self = parseProcStat(await readFile('/proc/self/stat', 'utf8'));
      expect(owner.processStart).toBe(self!.startTime);
      expect(owner.bootId).toBe((await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim());
    }
  });

  it('parses a command name holding spaces and parentheses', () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3));
    fields[0] = 'Z';
    expect(parseProcStat(`42 (a (b) c) ${fields.join(' ')}`)).toEqual({
      state: 'Z',
      startTime: '22',
    });
  });
});
