import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { stopHashWorker, StreamHash } from '../../server/media/hasher';

const expected = (bytes: Buffer) => ({
  md5: createHash('md5').update(bytes).digest('hex'),
  sha256: createHash('sha256').update(bytes).digest('hex'),
});

describe('StreamHash (md5 and sha256 in worker threads)', () => {
  it('hashes chunks of any size, views into larger buffers included, like one pass would', async () => {
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    const hash = StreamHash.start();
    // Uneven chunks, each a view into the same large buffer (as network chunks often are).
    for (let at = 0, size = 1; at < bytes.length; at += size, size = (size * 7) % 200_000 || 1)
      hash.update(bytes.subarray(at, Math.min(bytes.length, at + size)));
    expect(await hash.digest()).toEqual(expected(bytes));
    // Handing bytes to the worker must not detach or change the caller's buffer.
    expect(bytes.length).toBe(3 * 1024 * 1024 + 17);
  });

  it('asks its sender to wait while several MiB are queued, and lets it go on once hashed', async () => {
    const bytes = randomBytes(12 * 1024 * 1024);
    const hash = StreamHash.start();
    let waits = 0;
    for (let at = 0; at < bytes.length; at += 64 * 1024) {
      const behind = hash.update(bytes.subarray(at, at + 64 * 1024));
      if (behind) {
        waits++;
        await behind;
      }
    }
    expect(waits).toBeGreaterThan(0); // 12 MiB sent at once is more than may be queued
    expect(await hash.digest()).toEqual(expected(bytes));
  });

  it('keeps concurrent uploads apart, and hashes an empty one', async () => {
    const inputs = [randomBytes(500_000), randomBytes(10), Buffer.alloc(0)];
    const hashes = inputs.map(() => StreamHash.start());
    for (let at = 0; at < 500_000; at += 1000)
      inputs.forEach((bytes, index) => hashes[index]!.update(bytes.subarray(at, at + 1000)));
    const digests = await Promise.all(hashes.map((hash) => hash.digest()));
    expect(digests).toEqual(inputs.map(expected));
  });

  it('forgets an aborted upload without disturbing the next', async () => {
    const aborted = StreamHash.start();
    aborted.update(randomBytes(300_000));
    aborted.abort();
    const bytes = randomBytes(1000);
    const next = StreamHash.start();
    next.update(bytes);
    expect(await next.digest()).toEqual(expected(bytes));
  });

  it('fails the uploads in progress when the worker is gone, and starts a new one for the next', async () => {
    const cut = StreamHash.start();
    cut.update(randomBytes(1000));
    await stopHashWorker();
    await expect(cut.digest()).rejects.toThrow(/hashing worker exited/);
    const bytes = randomBytes(1000);
    const next = StreamHash.start();
    next.update(bytes);
    expect(await next.digest()).toEqual(expected(bytes));
  });

  it(
    'fails an upload still sending when the worker goes, instead of leaving it waiting',
    { timeout: 10_000 },
    async () => {
      const hash = StreamHash.start();
      hash.update(randomBytes(2 * 1024 * 1024));
      await stopHashWorker();
      // Keep sending, as a receiver would: it must be told to stop, never to wait for ever.
      let refusal: Promise<void> | undefined;
      for (let sent = 0; !refusal && sent < 64 * 1024 * 1024; sent += 1024 * 1024) {
        refusal = hash.update(randomBytes(1024 * 1024));
      }
      expect(refusal).toBeDefined();
      await expect(refusal).rejects.toThrow(/hashing worker exited/);
      hash.abort();
    },
  );

  it('does not keep a process alive once its work is done', () => {
    const script =
      "import { StreamHash } from './server/media/hasher.ts';" +
      "const hash = StreamHash.start(); hash.update(Buffer.from('x'));" +
      'console.log((await hash.digest()).md5);';
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      {
        cwd: fileURLToPath(new URL('../..', import.meta.url)),
        timeout: 20_000,
        encoding: 'utf8',
      },
    );
    expect(run.signal, 'still running after 20 s').toBeNull();
    expect(run.stdout.trim()).toBe(expected(Buffer.from('x')).md5);
  }, 30_000);
});
