import { Readable } from 'node:stream';
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
