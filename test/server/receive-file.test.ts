import { createHash, randomBytes } from 'node:crypto';
import { open, readdir, readFile, rm, writeFile, type FileHandle } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { inspectFile, inspectHead } from '../../server/media/inspect-file';
import { consume } from '../../server/lib/consume';
import { receiveToFile } from '../../server/media/receive-file';
import { fixtures } from '../helpers/file-fixtures';
import {
  makeTempDir,
  portfolioBody,
  startTestServer,
  type TestServer,
} from '../helpers/test-server';

const HEAD = 256 * 1024;
const LIMITS = { maxBytes: 50 * 1024 * 1024, maxPixels: 50e6, clientName: 'photo.jpg' };
const digest = (algorithm: string, bytes: Buffer) =>
  createHash(algorithm).update(bytes).digest('hex');

/** Noise compresses badly, so these images are larger than the head kept in memory. */
function noise(width: number, height: number) {
  const raw = randomBytes(width * height * 3);
  return sharp(raw, { raw: { width, height, channels: 3 } });
}

/** A JPEG with ~320 KiB of comment segments before its frame header: past the head. */
async function jpegWithLongHeader(): Promise<Buffer> {
  const jpeg = await fixtures.jpeg(64, 48);
  const comment = Buffer.alloc(4 + 65000, 0x20);
  comment.set([0xff, 0xfe], 0);
  comment.writeUInt16BE(65000 + 2, 2);
  const comments = Array.from({ length: 5 }, () => comment);
  return Buffer.concat([jpeg.subarray(0, 2), ...comments, jpeg.subarray(2)]);
}

describe('inspecting an upload from its head', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await makeTempDir('receive-file-');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  async function fromFile(bytes: Buffer, name: string) {
    const path = join(dir, name);
    await writeFile(path, bytes);
    return inspectFile(path, {
      ...LIMITS,
      size: bytes.length,
      tail: bytes.subarray(-64 * 1024),
    });
  }

  it('tells a JPEG (EXIF orientation 6) and a PNG from their first 256 KiB as the file would', async () => {
    const jpeg = await noise(900, 600)
      .jpeg({ quality: 95 })
      .withMetadata({ orientation: 6 })
      .toBuffer();
    const png = await noise(500, 400).png().toBuffer();
    expect(jpeg.length).toBeGreaterThan(HEAD);
    expect(png.length).toBeGreaterThan(HEAD);

    for (const [bytes, name, mimeType, extension, dimention] of [
      [jpeg, 'rotated.jpg', 'image/jpeg', 'jpg', { width: 600, height: 900 }],
      [png, 'noise.png', 'image/png', 'png', { width: 500, height: 400 }],
    ] as const) {
      const fromHead = await inspectHead(bytes.subarray(0, HEAD), LIMITS.maxPixels);
      expect(fromHead, name).toEqual({ mimeType, extension, kind: 'image', dimention });
      expect(fromHead, name).toEqual(await fromFile(bytes, name));
    }
  });

  it('leaves to the whole file what the head cannot tell', async () => {
    const long = await jpegWithLongHeader();
    expect(await inspectHead(long.subarray(0, HEAD), LIMITS.maxPixels)).toBeNull();
    expect(await inspectHead(fixtures.pdf(), LIMITS.maxPixels)).toBeNull();
    expect(await inspectHead(await fixtures.webp(), LIMITS.maxPixels)).toBeNull();

    // The upload still gets the right answer, from the file.
    const path = join(dir, 'long-header.jpg');
    const received = await receiveToFile([long], path, LIMITS);
    await received.durable;
    expect(await received.inspection).toEqual({
      mimeType: 'image/jpeg',
      extension: 'jpg',
      kind: 'image',
      dimention: { width: 64, height: 48 },
    });
  });

  it('refuses a pixel bomb from its head', async () => {
    await expect(inspectHead(fixtures.pixelBomb(), LIMITS.maxPixels)).rejects.toMatchObject({
      code: 'IMAGE_TOO_LARGE',
    });
  });
});

describe('receiveToFile', () => {
  let dir: string;
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('writes a stream of chunks to a durable file, hashed and inspected', async () => {
    dir = await makeTempDir('receive-file-');
    const jpeg = await noise(2000, 1400).jpeg({ quality: 95 }).toBuffer();
    expect(jpeg.length).toBeGreaterThan(2 * 1024 * 1024); // several write batches and fsyncs
    // Uneven chunks, as a network delivers them.
    const chunks: Buffer[] = [];
    for (let offset = 0, n = 0; offset < jpeg.length; n++) {
      const length = 1000 + ((n * 7919) % 70000);
      chunks.push(jpeg.subarray(offset, offset + length));
      offset += length;
    }
    const path = join(dir, 'upload.part');
    const received = await receiveToFile(Readable.from(chunks), path, LIMITS);
    await received.durable;
    expect(received.size).toBe(jpeg.length);
    expect(await received.hashes).toEqual({
      md5: digest('md5', jpeg),
      sha256: digest('sha256', jpeg),
    });
    expect((await received.inspection).dimention).toEqual({ width: 2000, height: 1400 });
    expect((await readFile(path)).equals(jpeg)).toBe(true);
  });

  it('stops reading and destroys the stream past the size limit', async () => {
    dir = await makeTempDir('receive-file-');
    const source = Readable.from(Array.from({ length: 50 }, () => Buffer.alloc(64 * 1024)));
    const receiving = receiveToFile(source, join(dir, 'big.part'), {
      ...LIMITS,
      maxBytes: 1024 * 1024,
    });
    await expect(receiving).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(source.destroyed).toBe(true);
  });

  it('fails with a failed write and writes no batch after it, so the file has no hole', async () => {
    dir = await makeTempDir('receive-file-');
    const probe = await open(join(dir, 'probe'), 'w');
    const fileHandle = Object.getPrototypeOf(probe) as FileHandle;
    await probe.close();
    const writev = vi
      .spyOn(fileHandle, 'writev')
      .mockRejectedValueOnce(new Error('ENOSPC: no space left on device'));
    try {
      // 4 MiB: batches of 1 MiB are queued behind the one that fails.
      const source = Readable.from(Array.from({ length: 64 }, () => Buffer.alloc(64 * 1024)));
      const receiving = receiveToFile(source, join(dir, 'full.part'), LIMITS);
      await expect(receiving).rejects.toThrow('no space left on device');
      expect(writev).toHaveBeenCalledTimes(1);
    } finally {
      writev.mockRestore();
    }
  });
});

describe('consume', () => {
  it('waits for the last chunk taken, even when the stream ends meanwhile', async () => {
    // Everything is buffered and the end is known before reading starts, as with busboy's
    // file stream: 'end' comes while the stream is paused for the last chunk.
    const source = new Readable({ read() {} });
    for (let n = 0; n < 3; n++) source.push(Buffer.alloc(1000, n));
    source.push(null);
    const taken: number[] = [];
    let finishedLast = false;
    await consume(source, new AbortController().signal, (chunk) => {
      taken.push(chunk[0]!);
      if (taken.length < 3) return undefined;
      return new Promise<void>((resolve) =>
        setTimeout(() => {
          finishedLast = true;
          resolve();
        }, 50),
      );
    });
    expect(taken).toEqual([0, 1, 2]);
    expect(finishedLast).toBe(true);
  });

  it('throws the failure of the last chunk taken', async () => {
    const source = new Readable({ read() {} });
    source.push(Buffer.alloc(10));
    source.push(null);
    const failing = consume(source, new AbortController().signal, () =>
      Promise.reject(new Error('disk full')),
    );
    await expect(failing).rejects.toThrow('disk full');
  });

  it('takes one large buffer in pieces, so waiting applies to each', async () => {
    const sizes: number[] = [];
    await consume([Buffer.alloc(5 * 1024 * 1024 + 1)], new AbortController().signal, (chunk) => {
      sizes.push(chunk.byteLength);
      return undefined;
    });
    expect(sizes).toEqual([...Array(5).fill(1024 * 1024), 1]);
  });
});

describe('an upload refused from its head', () => {
  let server: TestServer;
  let id: string;
  beforeAll(async () => {
    server = await startTestServer();
    id = (await server.request('POST', '/api/v1/portfolio', { body: portfolioBody() })).body
      .portfolioId;
  });
  afterAll(() => server.close());

  // Without the early refusal the server would wait for bytes that never come: a hang.
  it(
    'is answered 413 while the client is still sending, and leaves nothing behind',
    { timeout: 10_000 },
    async () => {
      const boundary = 'refusedfromitshead';
      const start = Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bomb.png"\r\n` +
            'Content-Type: image/png\r\n\r\n',
        ),
        fixtures.pixelBomb(),
        Buffer.alloc(300 * 1024), // past the head; the rest of the announced body never comes
      ]);
      const url = new URL(`${server.url}/api/v1/portfolio/${id}/cover`);
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(url, {
          method: 'PUT',
          headers: {
            authorization: server.adminSession,
            'content-type': `multipart/form-data; boundary=${boundary}`,
            'content-length': start.length + 10 * 1024 * 1024,
          },
        });
        req.on('response', (response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk));
          response.on('end', () => {
            resolve({ status: response.statusCode!, body });
            req.destroy();
          });
        });
        req.on('error', reject);
        req.write(start);
      });
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body)).toMatchObject({ code: 'IMAGE_TOO_LARGE' });
      expect(await readdir(join(server.dataDir, 'blobs', 'tmp'))).toEqual([]);
      const detail = await server.request('GET', `/api/v1/portfolio/${id}`);
      expect(detail.body.cover).toBeFalsy();
    },
  );
});
