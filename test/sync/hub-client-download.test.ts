import { createHash } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HubClient } from '../../server/sync/hub-client';
import { SyncError } from '../../server/sync/sync-error';
import { fixtures } from '../helpers/file-fixtures';
import { ADMIN, makeTempDir, startTestServer, type TestServer } from '../helpers/test-server';

/**
 * The replica's blob download (HubClient.getBlob) against a real hub over HTTP: it hashes the
 * bytes as they arrive, so the SHA-256 it answers must be the whole file's, also when it resumed
 * a partial file with a Range request or found the file whole already.
 */
describe('downloading a blob from the hub', () => {
  let hub: TestServer;
  let client: HubClient;
  let work: string;
  let blob: Buffer;
  let sha256: string;

  beforeAll(async () => {
    hub = await startTestServer();
    work = await makeTempDir('blob-download-');
    const created = await hub.request('POST', '/api/v1/portfolio', {
      body: { memberBarcode: 'B1', category: 'C', projectTitle: 'T', projectDetail: 'D' },
    });
    expect(created.status).toBe(201);
    blob = await fixtures.jpeg(640, 480);
    const put = await hub.request('PUT', `/api/v1/portfolio/${created.body.portfolioId}/cover`, {
      body: { originalFilename: 'cover.jpg', data: blob.toString('base64') },
    });
    expect(put.status).toBe(200);
    sha256 = createHash('sha256').update(blob).digest('hex');
    client = new HubClient(hub.url);
    const device = await client.registerDevice(ADMIN.username, ADMIN.password, 'test', 'r-1');
    client = new HubClient(hub.url, device.token);
  });
  afterAll(async () => {
    await hub?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('writes the whole blob and answers its hash and size', async () => {
    const path = join(work, 'fresh');
    let counted = 0;
    const { durable, ...got } = await client.getBlob(sha256, path, (n) => (counted += n));
    await durable;
    expect(got).toEqual({ bytes: blob.length, sha256 });
    expect(counted).toBe(blob.length);
    expect((await readFile(path)).equals(blob)).toBe(true);
  });

  it('continues a partial file and hashes the part it kept too', async () => {
    const path = join(work, 'half');
    const half = Math.floor(blob.length / 2);
    await writeFile(path, blob.subarray(0, half));
    const { durable, ...got } = await client.getBlob(sha256, path, () => {});
    await durable;
    expect(got).toEqual({ bytes: blob.length - half, sha256 });
    expect((await readFile(path)).equals(blob)).toBe(true);
  });

  it('finds a file that is whole already and sends nothing more', async () => {
    const path = join(work, 'whole');
    await writeFile(path, blob);
    const { durable, ...got } = await client.getBlob(sha256, path, () => {});
    await durable;
    expect(got).toEqual({ bytes: 0, sha256 });
  });

  it('answers the hash of what the file holds when a kept part is wrong', async () => {
    const path = join(work, 'wrong');
    const half = Math.floor(blob.length / 2);
    await writeFile(path, Buffer.alloc(half, 7));
    const got = await client.getBlob(sha256, path, () => {});
    await got.durable;
    const held = await readFile(path);
    expect(held.length).toBe(blob.length);
    expect(got.sha256).toBe(createHash('sha256').update(held).digest('hex'));
    expect(got.sha256).not.toBe(sha256);
  });

  it('says a connection cut mid-blob in words, keeps what came, and the next try resumes it', async () => {
    // In front of the hub: the first download is cut after half the bytes, the next one answers
    // 500 once (tried again at once), then the hub answers as it is.
    const half = Math.floor(blob.length / 2);
    let downloads = 0;
    const ranges: (string | undefined)[] = [];
    const front = createServer((request, response) => {
      const n = ++downloads;
      ranges.push(request.headers.range);
      if (n === 2) return response.writeHead(500).end();
      const forward = httpRequest(
        `${hub.url}${request.url}`,
        { headers: request.headers },
        (answer) => {
          response.writeHead(answer.statusCode!, answer.headers);
          if (n > 1) return answer.pipe(response);
          let sent = 0;
          answer.on('data', (chunk: Buffer) => {
            const piece = chunk.subarray(0, Math.max(0, half - sent));
            sent += piece.length;
            // Cut once the half is on its way (destroying at once could drop it unsent).
            if (piece.length > 0)
              response.write(piece, () => {
                if (sent >= half) response.socket?.destroy();
              });
          });
        },
      );
      forward.end();
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    try {
      const port = (front.address() as AddressInfo).port;
      const token = (client as unknown as { token: string }).token;
      const viaFront = new HubClient(`http://127.0.0.1:${port}`, token);
      const path = join(work, 'cut');
      const cut = await viaFront.getBlob(sha256, path, () => {}).catch((error: unknown) => error);
      expect(cut).toBeInstanceOf(SyncError);
      expect(cut).toMatchObject({ code: 'HUB_UNREACHABLE', transient: true });
      expect((cut as SyncError).message).toMatch(/cannot be reached/);
      expect((await readFile(path)).length).toBeGreaterThan(0);

      const { durable, ...got } = await viaFront.getBlob(sha256, path, () => {});
      await durable;
      expect(got.sha256).toBe(sha256);
      expect(got.bytes).toBeLessThan(blob.length); // only what was missing travelled again
      expect(ranges.slice(1)).toEqual([ranges[1], ranges[1]]);
      expect(ranges[1]).toMatch(/^bytes=\d+-$/);
      expect((await readFile(path)).equals(blob)).toBe(true);
    } finally {
      await new Promise((resolve) => front.close(resolve));
    }
  });
});
