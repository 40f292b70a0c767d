import { crc32 } from 'node:zlib';
import type Yazl from 'yazl';
import { lazyRequire } from '../lazy-require';

interface BufferCrc32 {
  unsigned(buffer: Buffer, previous?: number | Buffer): number;
}

const loadCrc32 = lazyRequire<BufferCrc32>('buffer-crc32');
const loadYazlModule = lazyRequire<typeof Yazl>('yazl');
let yazl: typeof Yazl | undefined;

/**
 * yazl, the ZIP writer, with its CRC-32 done by Node's native zlib.crc32 (Node ≥ 20.15) rather
 * than buffer-crc32's byte-at-a-time loop in JavaScript: that loop ran at about 65 MB/s on this
 * machine and was the export's whole CPU cost for images (zlib.crc32: over 500 MB/s under the
 * same load). yazl calls `unsigned(chunk, previous)` on the module object it required, so both
 * are loaded by Node's require (one shared instance, not a bundled copy) and that one property is
 * replaced by a function with the same answers (checked in test/server/zip-writer.test.ts).
 */
export function loadYazl(): typeof Yazl {
  if (yazl) return yazl;
  const bufferCrc32 = loadCrc32();
  bufferCrc32.unsigned = (buffer, previous = 0) =>
    crc32(buffer, Buffer.isBuffer(previous) ? previous.readUInt32BE(0) : previous);
  yazl = loadYazlModule();
  return yazl;
}
