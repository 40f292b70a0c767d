import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { zipExport } from '../../../server/transfer/export-archive';
import type { StoredPortfolio } from '../../../server/repositories/portfolio-repository-contract';
import { portfolioRecord } from '../../helpers/portfolio-record';

const stored = (id: string): StoredPortfolio => ({
  ...portfolioRecord(id),
  seq: 1,
  createdBy: 'ann',
  modifiedBy: 'ann',
});

describe('zipExport streams with bounded memory (DESIGN §11)', () => {
  it('reads the library only as fast as the reader takes the ZIP', async () => {
    let read = 0;
    const stream = zipExport({
      async *pages() {
        for (let page = 0; page < 50; page++) {
          yield Array.from({ length: 100 }, (_, n) => stored(`p${page}-${n}`));
        }
      },
      history: async () => {
        read++;
        return [];
      },
      hasBlob: async () => false,
      blob: () => Readable.from([]),
      libraryId: 'lib',
      productVersion: '0',
      now: 0,
    });
    // Nobody reads: the producer must stop after the stream buffers fill, not read 5000 records.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(read).toBeLessThan(200);
    // Read to the end: every portfolio arrives.
    let bytes = 0;
    for await (const chunk of stream) bytes += (chunk as Buffer).length;
    expect(read).toBe(5000);
    expect(bytes).toBeGreaterThan(5000 * 100);
  });
});

describe('the ZIP writer', () => {
  it("writes CRC-32s that another tool checks (Info-ZIP's unzip -t), for a blob read in chunks", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'zip-writer-'));
    try {
      // 3 MB of noise read in 64 KiB chunks: the CRC runs on across chunks, as for an image.
      const blob = randomBytes(3 << 20);
      const stream = zipExport({
        async *pages() {
          yield [{ ...stored('p1'), cover: { ...stored('p1').cover!, sha256: 'a'.repeat(64) } }];
        },
        history: async () => [],
        hasBlob: async () => true,
        blob: () => Readable.from(chunks(blob, 1 << 16)),
        libraryId: 'lib',
        productVersion: '0',
        now: 0,
      });
      const file = join(dir, 'export.zip');
      await pipeline(stream, createWriteStream(file));
      const test = spawnSync('unzip', ['-t', file], { encoding: 'utf8' });
      expect(test.stdout).toContain('No errors detected');
      expect(test.stdout).toContain(`testing: files/${'a'.repeat(64)}`);
      expect(test.status).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

function* chunks(bytes: Buffer, size: number) {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}
