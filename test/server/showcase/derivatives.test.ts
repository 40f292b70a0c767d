/**
 * The showcase's image derivatives on real files with real sharp: made once, kept on disk under
 * the size bound, the least recently used removed first, and taken in again after a restart.
 */
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Derivatives } from '../../../server/showcase/derivatives';
import { makeTempDir } from '../../helpers/test-server';

describe('showcase derivatives', () => {
  let root: string;
  const shas = ['a', 'b', 'c'].map((char) => char.repeat(64));

  beforeAll(async () => {
    root = await makeTempDir('portfolio-derivatives-');
    await mkdir(join(root, 'blobs'));
    for (const [at, sha] of shas.entries()) {
      const raw = Buffer.alloc(800 * 600 * 3);
      for (let i = 0; i < raw.length; i++) raw[i] = ((i + at) * 2654435761) >>> 24;
      await sharp(raw, { raw: { width: 800, height: 600, channels: 3 } })
        .jpeg()
        .toFile(join(root, 'blobs', sha));
    }
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  const open = async (maxBytes: number) => {
    const derivatives = new Derivatives({
      dir: join(root, 'media'),
      sourcePath: (sha256) => join(root, 'blobs', sha256),
      maxPixels: 50_000_000,
      maxBytes,
    });
    await derivatives.init();
    return derivatives;
  };

  it('makes a derivative once and serves it again from disk', async () => {
    const derivatives = await open(100 * 1024 * 1024);
    const path = await derivatives.get(shas[0]!, 320, 'webp');
    const made = await stat(path);
    expect((await sharp(path).metadata()).width).toBe(320);
    expect(await derivatives.get(shas[0]!, 320, 'webp')).toBe(path);
    expect((await stat(path)).mtimeMs).toBe(made.mtimeMs);
    // Concurrent requests share one render.
    const [one, two] = await Promise.all([
      derivatives.get(shas[1]!, 640, 'webp'),
      derivatives.get(shas[1]!, 640, 'webp'),
    ]);
    expect(one).toBe(two);
    expect(derivatives.count).toBe(2);
  });

  it('stays within its size bound, removing the least recently used first', async () => {
    await rm(join(root, 'media'), { recursive: true, force: true });
    const probe = await open(100 * 1024 * 1024);
    const size = (await stat(await probe.get(shas[0]!, 640, 'webp'))).size;
    // Room for about two derivatives of this size.
    const derivatives = await open(Math.floor(size * 2.5));
    await derivatives.get(shas[1]!, 640, 'webp');
    await derivatives.get(shas[0]!, 640, 'webp'); // used again: now the newest
    await derivatives.get(shas[2]!, 640, 'webp');
    expect(derivatives.bytes).toBeLessThanOrEqual(Math.floor(size * 2.5));
    const names = await readdir(join(root, 'media'));
    expect(names.sort()).toEqual([`${shas[0]}-640.webp`, `${shas[2]}-640.webp`]);

    // A restart takes in what is there, and drops leftovers of cut renders.
    await writeFile(join(root, 'media', `.${shas[1]}-640.webp.1.ab.tmp`), 'half');
    const again = await open(Math.floor(size * 2.5));
    expect(again.count).toBe(2);
    expect(await readdir(join(root, 'media'))).toHaveLength(2);
  });
});
