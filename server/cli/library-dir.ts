import { readdir } from 'node:fs/promises';
import { CommandFailed } from './command';

/**
 * Whether `dataDir` holds a library: its snapshot or a journal segment. Checked before the
 * store is opened, because opening an empty folder would start a new library in it (a mistyped
 * --data-dir must not leave files behind). Only `serve` creates a library.
 */
export async function holdsDatabase(dataDir: string): Promise<boolean> {
  try {
    return (await readdir(dataDir)).some(
      (name) => name === 'db.json' || /^journal-\d+\.ndjson$/.test(name),
    );
  } catch {
    return false;
  }
}

/** Refuses, creating nothing, a data directory that holds no library; `flag` names where it came from. */
export async function requireLibrary(dataDir: string, flag = '--data-dir'): Promise<void> {
  if (!(await holdsDatabase(dataDir)))
    throw new CommandFailed(
      `${dataDir} holds no Portfolio Manager data; check ${flag}. Only "portfolio serve" creates a library.`,
    );
}
