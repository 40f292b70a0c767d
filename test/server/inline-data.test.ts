import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from '../../server/config';
import { base64Pieces, INLINE_CHUNK_BYTES } from '../../server/http/inline-data-response';
import { expectError } from '../helpers/error-body';
import { fixtures, uploadMultipart } from '../helpers/file-fixtures';
import {
  ADMIN,
  makeTempDir,
  portfolioBody,
  startTestServer,
  type TestServer,
} from '../helpers/test-server';

const MB = 1024 * 1024;

/** A PDF of about `bytes` bytes: the small valid one with random bytes in a comment line. */
function bigPdf(bytes: number): Buffer {
  const pdf = fixtures.pdf();
  return Buffer.concat([pdf.subarray(0, 9), Buffer.from('%'), randomBytes(bytes), pdf.subarray(8)]);
}

async function uploaded(server: TestServer, path: string, bytes: Buffer, filename: string) {
  const response = await uploadMultipart(server, path, bytes, { filename });
  expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
  return response.body;
}

describe('base64Pieces', () => {
  it('encodes any chunking of a stream to exactly its base64', async () => {
    const cases = [
      ...[0, 1, 2, 3, 4, 100].map((size) => ({ size, cuts: [1, 2, 3, 5, 64] })),
      ...[INLINE_CHUNK_BYTES + 1, 3 * INLINE_CHUNK_BYTES + 2].map((size) => ({
        size,
        cuts: [1000, 3 * 1024, INLINE_CHUNK_BYTES],
      })),
    ];
    for (const { size, cuts } of cases) {
      const bytes = randomBytes(size);
      for (const cut of cuts) {
        const chunks = async function* () {
          for (let at = 0; at < size; at += cut) yield bytes.subarray(at, at + cut);
        };
        const pieces: Buffer[] = [];
        for await (const piece of base64Pieces(chunks())) {
          // Padding only ever at the very end.
          expect(piece.subarray(0, -2).includes('=')).toBe(false);
          pieces.push(piece);
        }
        expect(Buffer.concat(pieces).toString('latin1'), `${size}/${cut}`).toBe(
          bytes.toString('base64'),
        );
      }
    }
  });
});

describe('the inline limit setting', () => {
  const inlineBytes = (env: string | undefined, given?: number) => {
    const saved = process.env.PORTFOLIO_INLINE_LIMIT_MB;
    if (env === undefined) delete process.env.PORTFOLIO_INLINE_LIMIT_MB;
    else process.env.PORTFOLIO_INLINE_LIMIT_MB = env;
    try {
      return resolveConfig({
        dataDir: 'x',
        limits: given === undefined ? {} : { inlineBytes: given },
      }).limits.inlineBytes;
    } finally {
      if (saved === undefined) delete process.env.PORTFOLIO_INLINE_LIMIT_MB;
      else process.env.PORTFOLIO_INLINE_LIMIT_MB = saved;
    }
  };

  it('is 64 MB by default, PORTFOLIO_INLINE_LIMIT_MB otherwise, the option above both', () => {
    expect(inlineBytes(undefined)).toBe(64 * MB);
    expect(inlineBytes('8')).toBe(8 * MB);
    expect(inlineBytes('0.5')).toBe(MB / 2);
    expect(inlineBytes('8', 1000)).toBe(1000);
  });

  it.each(['abc', '0', '-1', '1e3', ' '])('refuses PORTFOLIO_INLINE_LIMIT_MB=%j', (value) => {
    expect(() => inlineBytes(value)).toThrow(ConfigError);
  });
});

describe('file data inlined in detail and list answers', () => {
  let server: TestServer;
  let id: string;
  const files = new Map<string, Buffer>(); // fileId → bytes
  const LIMIT = 2 * MB;

  beforeAll(async () => {
    server = await startTestServer({ limits: { inlineBytes: LIMIT } });
    id = (await server.request('POST', '/api/v1/portfolio', { body: portfolioBody() })).body
      .portfolioId;
    const base = `/api/v1/portfolio/${id}`;
    const cover = await fixtures.jpeg(120, 90);
    files.set((await uploaded(server, `${base}/cover`, cover, 'cover.jpg')).fileId, cover);
    // Sizes around the 3-byte groups and the read size of the response writer.
    for (const size of [INLINE_CHUNK_BYTES - 1, INLINE_CHUNK_BYTES * 4 + 1, 300_001]) {
      const pdf = bigPdf(size);
      files.set((await uploaded(server, `${base}/draftingProcess`, pdf, 'a.pdf')).fileID, pdf);
    }
    const csv = fixtures.csv();
    files.set((await uploaded(server, `${base}/additionalDocument`, csv, 'a.csv')).fileID, csv);
  });
  afterAll(() => server.close());

  const decoded = (file: { data: string }) => Buffer.from(file.data, 'base64');

  it('answers the detail with every file as base64 of its exact bytes', async () => {
    const response = await fetch(`${server.url}/api/v1/portfolio/${id}`, {
      headers: { authorization: server.adminSession },
    });
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(Number(response.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    const detail = JSON.parse(text);
    expect(response.headers.get('etag')).toBe(`"${detail.revision}"`);
    expect(decoded(detail.cover)).toEqual(files.get(detail.cover.fileId));
    const listed = [...detail.draftingProcess, ...detail.additionalDocument];
    expect(listed).toHaveLength(4);
    for (const file of listed) expect(decoded(file)).toEqual(files.get(file.fileID));
    expect(detail.projectTitle).toBe(portfolioBody().projectTitle);
  });

  it('inlines only what `field` selects', async () => {
    const selected = await server.request(
      'GET',
      `/api/v1/portfolio/${id}?field=projectTitle,cover.data,cover.fileId,additionalDocument`,
    );
    expect(selected.status).toBe(200);
    expect(Object.keys(selected.body).sort()).toEqual(
      ['additionalDocument', 'cover', 'projectTitle'].sort(),
    );
    expect(decoded(selected.body.cover)).toEqual(files.get(selected.body.cover.fileId));
    const csv = selected.body.additionalDocument[0];
    expect(decoded(csv)).toEqual(files.get(csv.fileID));
  });

  it('selects File sub-fields of the lists, leaving their data out', async () => {
    const response = await fetch(
      `${server.url}/api/v1/portfolio/${id}?field=draftingProcess.fileID,draftingProcess.size`,
      { headers: { authorization: server.adminSession } },
    );
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(text).not.toContain('"data"');
    const { draftingProcess } = JSON.parse(text);
    expect(draftingProcess).toHaveLength(3);
    for (const file of draftingProcess) {
      expect(Object.keys(file).sort()).toEqual(['fileID', 'size']);
      expect(file.size).toBe(files.get(file.fileID)!.length);
    }
  });

  it('inlines list covers, and answers the same list without data as before', async () => {
    const withData = await server.request('GET', '/api/v1/portfolio?field=portfolioId,cover');
    expect(withData.status).toBe(200);
    const item = withData.body.lists.find((entry: any) => entry.portfolioId === id);
    expect(decoded(item.cover)).toEqual(files.get(item.cover.fileId));
    const without = await server.request('GET', '/api/v1/portfolio?field=portfolioId,cover.fileId');
    expect(without.body.lists.find((entry: any) => entry.portfolioId === id).cover).toEqual({
      fileId: item.cover.fileId,
    });
  });

  it('refuses with 413 RESPONSE_TOO_LARGE what would inline over the limit, before sending', async () => {
    const big = bigPdf(LIMIT);
    await uploaded(server, `/api/v1/portfolio/${id}/additionalDocument`, big, 'big.pdf');
    const response = await server.request('GET', `/api/v1/portfolio/${id}`);
    const body = expectError(response, 413, 'RESPONSE_TOO_LARGE');
    expect(body.message).toMatch(/field/);
    expect(body.message).toMatch(/files\/\{fileId\}/);
    expect(response.headers.get('etag')).toBeNull();
    // The same detail without data still answers, and so do the files by URL.
    const lean = await server.request(
      'GET',
      `/api/v1/portfolio/${id}?field=projectTitle,cover.fileId,draftingProcess`,
    );
    expect(lean.status).toBe(200);
    const files = await server.request('GET', `/api/v1/portfolio/${id}?field=additionalDocument`);
    expectError(files, 413, 'RESPONSE_TOO_LARGE');
  });
});

/** Peak of a process's resident memory while `during` runs, sampled from /proc. */
async function peakRss(pid: number, during: Promise<unknown>): Promise<number> {
  const rss = async () => {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
  };
  let peak = await rss();
  let done = false;
  void during.finally(() => (done = true));
  while (!done) {
    peak = Math.max(peak, await rss());
    await sleep(5);
  }
  await during;
  return Math.max(peak, await rss());
}

describe.runIf(process.platform === 'linux')('memory of a large inlined detail', () => {
  let child: ChildProcess;
  let url = '';
  beforeAll(async () => {
    const dataDir = await makeTempDir();
    child = spawn(
      process.execPath,
      ['--import', 'tsx', 'test/server/storage-crash-child.ts', dataDir, String(1e9)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
        env: { ...process.env, PORTFOLIO_INLINE_LIMIT_MB: '512' },
      },
    );
    url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /LISTENING (\S+)/.exec(out);
        if (match) resolve(match[1]!);
      });
      child.once('exit', (code) => reject(new Error(`server exited (${code})`)));
    });
  });
  afterAll(() => {
    child?.kill('SIGKILL');
  });

  it('streams 20 attachments of one 5 MB PDF (133 MB of JSON) in bounded memory', async () => {
    const session = (
      await (
        await fetch(`${url}/api/v1/appauth`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(ADMIN),
        })
      ).json()
    ).sessionId as string;
    const server = { url, adminSession: session } as TestServer;
    const created = await fetch(`${url}/api/v1/portfolio`, {
      method: 'POST',
      headers: { authorization: session, 'content-type': 'application/json' },
      body: JSON.stringify(portfolioBody()),
    });
    const id = ((await created.json()) as { portfolioId: string }).portfolioId;
    const pdf = bigPdf(5 * MB);
    for (let i = 0; i < 20; i++)
      await uploaded(server, `/api/v1/portfolio/${id}/additionalDocument`, pdf, `copy-${i}.pdf`);

    const expectedPdf = pdf.toString('base64');
    let received = 0;
    let copies = 0;
    const read = (async () => {
      const response = await fetch(`${url}/api/v1/portfolio/${id}`, {
        headers: { authorization: session },
      });
      expect(response.status).toBe(200);
      const length = Number(response.headers.get('content-length'));
      // Count whole copies of the PDF's base64 as the text streams by, keeping little of it.
      let window = '';
      const decoder = new TextDecoder();
      for await (const chunk of Readable.fromWeb(response.body! as NodeReadableStream)) {
        received += (chunk as Buffer).length;
        window += decoder.decode(chunk as Buffer, { stream: true });
        for (let at = window.indexOf(expectedPdf); at >= 0; at = window.indexOf(expectedPdf)) {
          copies++;
          window = window.slice(at + expectedPdf.length);
        }
        if (window.length > 2 * expectedPdf.length) window = window.slice(-expectedPdf.length);
      }
      expect(received).toBe(length);
    })();
    const before = await peakRss(child.pid!, sleep(200));
    const peak = await peakRss(child.pid!, read);
    expect(copies).toBe(20);
    expect(received).toBeGreaterThan(133 * MB);
    // Reading it whole as before took more than the answer's size (a string of 133 MB plus the
    // buffers); streamed, the server grows by a few chunks and the serialized JSON around them.
    console.log(`server RSS ${Math.round(before / MB)} MB → peak ${Math.round(peak / MB)} MB`);
    expect(peak - before).toBeLessThan(48 * MB);
  }, 120_000);
});
