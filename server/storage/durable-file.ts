import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** fsync a directory so that a rename or unlink inside it survives a power loss. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** A temp-file name next to `path`, unique per process and call, so concurrent writers never share one. */
export function tempPathFor(path: string): string {
  return join(
    dirname(path),
    `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`,
  );
}

/**
 * Writes `chunks` to `path` atomically and durably: unique temp file, write, fsync, rename over
 * the target, fsync the directory. A reader sees either the old file or the new one, never a
 * mix, and once this resolves the new content survives a crash.
 */
export async function writeFileDurably(
  path: string,
  chunks: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>,
): Promise<void> {
  const temp = tempPathFor(path);
  const handle = await open(temp, 'wx', 0o600);
  try {
    for await (const chunk of chunks) await handle.writeFile(chunk);
    await handle.sync();
    await handle.close();
    await rename(temp, path);
  } catch (error) {
    await handle.close().catch(() => {});
    await unlink(temp).catch(() => {});
    throw error;
  }
  await syncDirectory(dirname(path));
}
