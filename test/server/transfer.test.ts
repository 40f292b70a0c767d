import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { download, fixtures, uploadMultipart } from '../helpers/file-fixtures';
import { expectError } from '../helpers/error-body';
import {
  checkAnswer,
  portfolioBody,
  startTestServer,
  type ApiResponse,
  type TestServer,
} from '../helpers/test-server';

const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** A ZIP made by another tool (Python's zipfile), with exactly these entries. */
function pythonZip(entries: Array<{ name: string; data: Buffer | string }>): Buffer {
  const script = `
import base64, io, json, sys, zipfile
out = io.BytesIO()
with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:
    for e in json.load(sys.stdin):
        z.writestr(zipfile.ZipInfo(e['name']), base64.b64decode(e['data']), zipfile.ZIP_DEFLATED)
sys.stdout.buffer.write(out.getvalue())
`;
  const input = JSON.stringify(
    entries.map((entry) => ({
      name: entry.name,
      data: Buffer.from(entry.data).toString('base64'),
    })),
  );
  return execFileSync('python3', ['-c', script], { input, maxBuffer: 1 << 30 });
}

/** The entries of a ZIP, read by Python's zipfile (another tool than ours). */
function pythonUnzip(zip: Buffer): Record<string, Buffer> {
  const script = `
import base64, io, json, sys, zipfile
z = zipfile.ZipFile(io.BytesIO(sys.stdin.buffer.read()))
print(json.dumps({n: base64.b64encode(z.read(n)).decode() for n in z.namelist()}))
`;
  const out = execFileSync('python3', ['-c', script], { input: zip, maxBuffer: 1 << 30 });
  const entries = JSON.parse(out.toString()) as Record<string, string>;
  return Object.fromEntries(
    Object.entries(entries).map(([name, data]) => [name, Buffer.from(data, 'base64')]),
  );
}

/** Rows of a CSV as Python's csv module (as a spreadsheet would) reads them. */
function pythonCsv(text: string): string[][] {
  const script = `
import csv, io, json, sys
print(json.dumps(list(csv.reader(io.StringIO(sys.stdin.read(), newline='')))))
`;
  return JSON.parse(execFileSync('python3', ['-c', script], { input: text }).toString());
}

async function exportOf(s: TestServer, query = 'format=zip', session = s.adminSession) {
  const response = await fetch(`${s.url}/api/v1/export?${query}`, {
    headers: { authorization: session },
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  return { status: response.status, headers: response.headers, bytes };
}

async function importZip(
  s: TestServer,
  zip: Buffer,
  session = s.adminSession,
): Promise<ApiResponse> {
  const response = await fetch(`${s.url}/api/v1/import`, {
    method: 'POST',
    headers: { authorization: session, 'content-type': 'application/zip' },
    body: new Uint8Array(zip),
  });
  const text = await response.text();
  const body = text ? JSON.parse(text) : text;
  checkAnswer(s.app, 'POST', '/api/v1/import', response, body);
  return { status: response.status, headers: response.headers, body };
}

async function create(s: TestServer, overrides: Record<string, unknown> = {}): Promise<string> {
  const created = await s.request('POST', '/api/v1/portfolio', { body: portfolioBody(overrides) });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.portfolioId;
}

const put = (s: TestServer, id: string, body: Record<string, unknown>) =>
  s.request('PUT', `/api/v1/portfolio/${id}`, { body: portfolioBody(body) });

async function history(s: TestServer, id: string) {
  const list = await s.request('GET', `/api/v1/portfolio/${id}/revisions?pageSize=1000`);
  expect(list.status).toBe(200);
  const revisions = [];
  for (const summary of list.body.revisions) {
    const one = await s.request('GET', `/api/v1/portfolio/${id}/revisions/${summary.revision}`);
    revisions.push({ summary, detail: one.body });
  }
  return revisions;
}

async function total(s: TestServer): Promise<number> {
  return (await s.request('GET', '/api/v1/portfolio?field=portfolioId')).body.total;
}

describe('export and import of a ZIP (DESIGN §11)', () => {
  let a: TestServer;
  let b: TestServer;
  let p1: string;
  let p2: string;
  let cover: Buffer;
  let pdf: Buffer;
  beforeAll(async () => {
    a = await startTestServer();
    b = await startTestServer();
    p1 = await create(a, { projectTitle: 'First', occasion: ['Spring'] });
    await put(a, p1, { projectTitle: 'First, again', generalTag: ['wood', 'oak'] });
    cover = await fixtures.jpegRotated();
    pdf = fixtures.pdf();
    expect(
      (await uploadMultipart(a, `/api/v1/portfolio/${p1}/cover`, cover, { filename: 'c.jpg' }))
        .status,
    ).toBe(200);
    expect(
      (
        await uploadMultipart(a, `/api/v1/portfolio/${p1}/additionalDocument`, pdf, {
          filename: 'plan.pdf',
          description: 'The plan',
        })
      ).status,
    ).toBe(201);
    p2 = await create(a, { projectTitle: 'Second', category: 'Garden' });
    await put(a, p2, { projectTitle: 'Second', category: 'Garden', command: 'publish' });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  it('exports a ZIP another tool reads: manifest, portfolios with history, files by sha256', async () => {
    const response = await exportOf(a);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/zip');
    expect(response.headers.get('content-disposition')).toMatch(
      /^attachment; filename="portfolios-.*\.zip"/,
    );
    const entries = pythonUnzip(response.bytes);
    const manifest = JSON.parse(entries['manifest.json']!.toString());
    expect(manifest).toMatchObject({
      formatVersion: 1,
      libraryId: expect.any(String),
      counts: { portfolios: 2, revisions: 6, files: 2 },
    });
    expect(entries[`files/${sha256(cover)}`]).toEqual(cover);
    expect(entries[`files/${sha256(pdf)}`]).toEqual(pdf);
    for (const [name, bytes] of Object.entries(entries)) {
      if (name !== 'manifest.json') expect(manifest.files[name]).toBe(sha256(bytes));
    }
    const one = JSON.parse(entries[`portfolios/${p1}.json`]!.toString());
    expect(one).toMatchObject({ portfolioId: p1, revision: 4, createdBy: 'admin' });
    expect(one.cover.sha256).toBe(sha256(cover));
    expect(one.cover.data).toBeUndefined();
    expect(
      one.revisions.map((r: { revision: number; command: string }) => [r.revision, r.command]),
    ).toEqual([
      [1, 'create'],
      [2, 'save'],
      [3, 'file'],
      [4, 'file'],
    ]);
  });

  it('round trip on another server: details, files (md5), history and createdDate equal', async () => {
    const zip = (await exportOf(a)).bytes;
    const report = await importZip(b, zip);
    expect(report.status, JSON.stringify(report.body)).toBe(200);
    expect(report.body).toEqual({
      created: 2,
      unchanged: 0,
      merged: 0,
      conflicts: 0,
      conflicted: [],
      refused: [],
    });
    for (const id of [p1, p2]) {
      const here = (
        await a.request(
          'GET',
          `/api/v1/portfolio/${id}?field=portfolioId,memberBarcode,category,projectTitle,cover,oboutProject,projectDetail,draftingProcess,projectLanuching,readyToBuy,occasion,referenceStyling,generalTag,additionalDocument,relativeCategory,certificateByOrg,certificateDesc,staffPick,createdDate,modifiedTime,published,active,revision,createdBy,modifiedBy`,
        )
      ).body;
      const there = (
        await b.request(
          'GET',
          `/api/v1/portfolio/${id}?field=portfolioId,memberBarcode,category,projectTitle,cover,oboutProject,projectDetail,draftingProcess,projectLanuching,readyToBuy,occasion,referenceStyling,generalTag,additionalDocument,relativeCategory,certificateByOrg,certificateDesc,staffPick,createdDate,modifiedTime,published,active,revision,createdBy,modifiedBy`,
        )
      ).body;
      expect(there).toEqual(here);
      expect(await history(b, id)).toEqual(await history(a, id));
    }
    const detail = (await b.request('GET', `/api/v1/portfolio/${p1}`)).body;
    const coverBytes = await download(b, `/api/v1/portfolio/${p1}/files/${detail.cover.fileId}`);
    expect(md5(coverBytes.bytes)).toBe(md5(cover));
    expect(detail.cover.md5Checksum).toBe(md5(cover));
    const doc = detail.additionalDocument[0];
    const docBytes = await download(b, `/api/v1/portfolio/${p1}/files/${doc.fileID}`);
    expect(md5(docBytes.bytes)).toBe(md5(pdf));
  });

  it('importing the same ZIP twice changes nothing', async () => {
    const zip = (await exportOf(a)).bytes;
    const before = await b.request('GET', '/api/v1/changes?since=0&limit=1000');
    const report = await importZip(b, zip);
    expect(report.body).toEqual({
      created: 0,
      unchanged: 2,
      merged: 0,
      conflicts: 0,
      conflicted: [],
      refused: [],
    });
    const after = await b.request('GET', '/api/v1/changes?since=0&limit=1000');
    expect(after.body.next).toBe(before.body.next);
    expect(await total(b)).toBe(2);
  });

  it('merges other content as a sync mutation: different fields merged, the same field a conflict', async () => {
    const id = await create(a, { projectTitle: 'Shared' });
    const before = await total(b);
    const first = await importZip(b, (await exportOf(a, `format=zip&ids=${id}`)).bytes);
    expect(first.body.created).toBe(1);
    // Each side changes another field, and both change projectDetail differently.
    await put(a, id, { projectTitle: 'Shared', aboutProject: 'From A', projectDetail: 'A says' });
    await put(b, id, { projectTitle: 'Shared', readyToBuy: 'From B', projectDetail: 'B says' });
    const zip = (await exportOf(a, `format=zip&ids=${id}`)).bytes;
    const merged = await importZip(b, zip);
    expect(merged.body).toEqual({
      created: 0,
      unchanged: 0,
      merged: 1,
      conflicts: 1,
      conflicted: [id],
      refused: [],
    });
    const there = (await b.request('GET', `/api/v1/portfolio/${id}`)).body;
    expect(there).toMatchObject({
      oboutProject: 'From A',
      readyToBuy: 'From B',
      projectDetail: 'B says',
    });
    const { conflicts } = (await b.request('GET', `/api/v1/portfolio/${id}/conflicts`)).body;
    expect(conflicts).toHaveLength(1);
    expect(conflicts[0].fields.projectDetail).toMatchObject({
      current: 'B says',
      theirs: 'A says',
    });
    // Never duplicated, and the same ZIP again changes nothing.
    expect(await total(b)).toBe(before + 1);
    const again = await importZip(b, zip);
    expect(again.body).toEqual({
      created: 0,
      unchanged: 1,
      merged: 0,
      conflicts: 0,
      conflicted: [],
      refused: [],
    });
    const after = await b.request('GET', `/api/v1/portfolio/${id}/conflicts`);
    expect(after.body.conflicts).toHaveLength(1);
  });

  it('imports a ZIP another tool made from our entries', async () => {
    const entries = pythonUnzip((await exportOf(a, `format=zip&ids=${p1}`)).bytes);
    const zip = pythonZip(Object.entries(entries).map(([name, data]) => ({ name, data })));
    const c = await startTestServer();
    try {
      const report = await importZip(c, zip);
      expect(report.body).toEqual({
        created: 1,
        unchanged: 0,
        merged: 0,
        conflicts: 0,
        conflicted: [],
        refused: [],
      });
      expect((await c.request('GET', `/api/v1/portfolio/${p1}`)).body.revision).toBe(4);
    } finally {
      await c.close();
    }
  });

  it('a viewer exports only what it may see, and no history', async () => {
    const viewer = await a.userSession('zip-viewer', 'viewer');
    const response = await exportOf(a, 'format=zip', viewer);
    expect(response.status).toBe(200);
    const entries = pythonUnzip(response.bytes);
    const names = Object.keys(entries).filter((name) => name.startsWith('portfolios/'));
    expect(names).toEqual([`portfolios/${p2}.json`]);
    expect(JSON.parse(entries[names[0]!]!.toString()).revisions).toEqual([]);
  });

  it('refuses a portfolio the caller may not edit, with the reason, and imports the rest', async () => {
    const c = await startTestServer();
    try {
      const editor = await c.userSession('garden-only', 'editor', ['Interior']);
      const zip = (await exportOf(a, `format=zip&ids=${p1},${p2}`)).bytes;
      const report = await importZip(c, zip, editor);
      expect(report.status).toBe(200);
      expect(report.body.created).toBe(1);
      expect(report.body.refused).toEqual([
        { portfolioId: p2, reason: expect.stringContaining('Garden') },
      ]);
      const viewer = await c.userSession('just-looking', 'viewer');
      expectError(await importZip(c, zip, viewer), 403, 'FORBIDDEN');
    } finally {
      await c.close();
    }
  });
});

describe('import refuses a bad ZIP whole, in the one error shape, writing nothing', () => {
  let s: TestServer;
  let good: Record<string, Buffer>;
  let source: TestServer;
  let id: string;
  let blob: Buffer;
  beforeAll(async () => {
    source = await startTestServer();
    id = await create(source, { projectTitle: 'Good' });
    blob = await fixtures.png();
    await uploadMultipart(source, `/api/v1/portfolio/${id}/cover`, blob, { filename: 'c.png' });
    good = pythonUnzip((await exportOf(source)).bytes);
    s = await startTestServer({ limits: { fileBytes: 1_000_000, importBytes: 3_000_000 } });
  });
  afterAll(async () => {
    await source.close();
    await s.close();
  });

  const entriesWith = (changes: Record<string, Buffer | string | null>) => {
    const all: Record<string, Buffer | string> = { ...good };
    for (const [name, data] of Object.entries(changes)) {
      if (data === null) delete all[name];
      else all[name] = data;
    }
    return Object.entries(all).map(([name, data]) => ({ name, data }));
  };
  const portfolioJson = () => JSON.parse(good[`portfolios/${id}.json`]!.toString());
  const manifestJson = () => JSON.parse(good['manifest.json']!.toString());

  async function expectNothingWritten() {
    expect(await total(s)).toBe(0);
    expect(existsSync(s.app.blobStore.pathOf(sha256(blob)))).toBe(false);
  }

  it('imports the good ZIP (the control)', async () => {
    const c = await startTestServer();
    try {
      expect((await importZip(c, pythonZip(entriesWith({})))).body.created).toBe(1);
    } finally {
      await c.close();
    }
  });

  it('a truncated ZIP', async () => {
    const zip = pythonZip(entriesWith({}));
    const response = await importZip(s, zip.subarray(0, Math.floor(zip.length / 2)));
    expect(expectError(response, 400, 'INVALID_ARCHIVE').message).toMatch(/not a complete ZIP/);
    await expectNothingWritten();
  });

  it('not a ZIP at all', async () => {
    expectError(await importZip(s, Buffer.from('hello')), 400, 'INVALID_ARCHIVE');
    await expectNothingWritten();
  });

  it.each(['../x', '/etc/x', 'files/../../x'])('an entry named %s', async (name) => {
    const response = await importZip(s, pythonZip(entriesWith({ [name]: 'boo' })));
    expect(expectError(response, 400, 'INVALID_ARCHIVE').message).toMatch(/outside the archive/);
    await expectNothingWritten();
  });

  it('a file whose name is not the sha256 of its bytes', async () => {
    const response = await importZip(
      s,
      pythonZip(
        entriesWith({ [`files/${sha256(blob)}`]: Buffer.concat([blob, Buffer.from('x')]) }),
      ),
    );
    expect(expectError(response, 400, 'ARCHIVE_HASH_MISMATCH').message).toMatch(
      /not the file it is named by/,
    );
    await expectNothingWritten();
  });

  it('a zip bomb: an entry that unpacks past the limit of one file', async () => {
    const zeros = Buffer.alloc(2_000_000);
    const response = await importZip(
      s,
      pythonZip(entriesWith({ [`files/${sha256(zeros)}`]: zeros })),
    );
    expectError(response, 413, 'ARCHIVE_TOO_LARGE');
    await expectNothingWritten();
  });

  it('a zip bomb: an entry that declares a tiny size and unpacks to a large one', async () => {
    const zeros = Buffer.alloc(2_000_000);
    const name = `files/${sha256(zeros)}`;
    const zip = pythonZip(entriesWith({ [name]: zeros }));
    // Both headers of that entry (local and central) claim 1000 bytes unpacked.
    const nameBytes = Buffer.from(name);
    for (const [signature, sizeAt] of [
      [0x04034b50, 22],
      [0x02014b50, 24],
    ] as const) {
      for (let at = zip.indexOf(nameBytes); at !== -1; at = zip.indexOf(nameBytes, at + 1)) {
        const header = at - (signature === 0x04034b50 ? 30 : 46);
        if (header >= 0 && zip.readUInt32LE(header) === signature)
          zip.writeUInt32LE(1000, header + sizeAt);
      }
    }
    const response = await importZip(s, zip);
    expect(expectError(response, 400, 'INVALID_ARCHIVE').message).toMatch(/more than it declares/);
    await expectNothingWritten();
  });

  it('a zip bomb: entries that together unpack past the import limit', async () => {
    const parts = [1, 2, 3, 4].map((n) => Buffer.alloc(900_000, n));
    const bomb = Object.fromEntries(parts.map((part) => [`files/${sha256(part)}`, part]));
    const response = await importZip(s, pythonZip(entriesWith(bomb)));
    expectError(response, 413, 'ARCHIVE_TOO_LARGE');
    await expectNothingWritten();
  });

  it('a manifest from a newer format version (its portfolios in a shape this one lacks)', async () => {
    const manifest = { ...manifestJson(), formatVersion: 2, somethingNew: true };
    const newer = { ...portfolioJson(), fieldOfTheFuture: [1] };
    const response = await importZip(
      s,
      pythonZip([
        ...entriesWith({ 'manifest.json': null, [`portfolios/${id}.json`]: JSON.stringify(newer) }),
        { name: 'manifest.json', data: JSON.stringify(manifest) },
      ]),
    );
    expect(expectError(response, 400, 'ARCHIVE_FORMAT_TOO_NEW').message).toMatch(/newer version/);
    await expectNothingWritten();
  });

  it('JSON with an unknown field', async () => {
    const json = { ...portfolioJson(), surprise: 1 };
    const response = await importZip(
      s,
      pythonZip(entriesWith({ [`portfolios/${id}.json`]: JSON.stringify(json) })),
    );
    const body = expectError(response, 400, 'INVALID_ARCHIVE');
    expect(body.message).toContain(`portfolios/${id}.json`);
    await expectNothingWritten();
  });

  it('JSON with a wrong type', async () => {
    const json = { ...portfolioJson(), staffPick: 'yes' };
    const response = await importZip(
      s,
      pythonZip(entriesWith({ [`portfolios/${id}.json`]: JSON.stringify(json) })),
    );
    const body = expectError(response, 400, 'INVALID_ARCHIVE');
    expect(
      body.details.map((detail) => detail.field),
      JSON.stringify(body),
    ).toContain(`portfolios/${id}.json.staffPick`);
    await expectNothingWritten();
  });

  it('no manifest', async () => {
    const response = await importZip(s, pythonZip(entriesWith({ 'manifest.json': null })));
    expectError(response, 400, 'INVALID_ARCHIVE');
    await expectNothingWritten();
  });
});

describe('CSV export (DESIGN §11)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  it('opens as is: UTF-8 with a BOM, a header, quotes and newlines escaped, formulas defused', async () => {
    const id = await create(s, {
      projectTitle: "=cmd|' /C calc'!A0",
      projectDetail: 'Line one, with "quotes"\nline two',
      aboutProject: '+1 and more',
      generalTag: ['@home', 'wood', 'ก้าว'],
      occasion: ['-minus'],
    });
    await create(s, { projectTitle: 'Plain', category: 'Garden' });
    const response = await exportOf(s, 'format=csv&orderBy=projectTitle');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect([...response.bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = response.bytes.toString('utf8').slice(1);
    const rows = pythonCsv(text);
    expect(rows[0]).toEqual([
      'portfolioId',
      'memberBarcode',
      'category',
      'relativeCategory',
      'projectTitle',
      'aboutProject',
      'projectDetail',
      'projectLanuching',
      'readyToBuy',
      'occasion',
      'referenceStyling',
      'generalTag',
      'certificateByOrg',
      'staffPick',
      'published',
      'active',
      'revision',
      'createdTime',
      'modifiedTime',
      'cover',
    ]);
    expect(rows).toHaveLength(3);
    const row = Object.fromEntries(rows[0]!.map((name, index) => [name, rows[1]![index]]));
    expect(row).toMatchObject({
      portfolioId: id,
      projectTitle: "'=cmd|' /C calc'!A0",
      projectDetail: 'Line one, with "quotes"\nline two',
      aboutProject: "'+1 and more",
      generalTag: "'@home; wood; ก้าว",
      occasion: "'-minus",
      published: 'false',
      revision: '1',
    });
    expect(rows[2]![4]).toBe('Plain');
  });

  it('follows the filter, and a viewer exports only what it may see', async () => {
    const csv = await exportOf(s, 'format=csv&filter=category:Garden');
    expect(pythonCsv(csv.bytes.toString('utf8').slice(1))).toHaveLength(2);
    const viewer = await s.userSession('csv-viewer', 'viewer');
    const seen = await exportOf(s, 'format=csv', viewer);
    expect(seen.status).toBe(200);
    expect(pythonCsv(seen.bytes.toString('utf8').slice(1))).toHaveLength(1);
  });

  it('a bad filter is a 400 in the one shape, before any byte', async () => {
    const response = await s.request('GET', '/api/v1/export?format=csv&filter=nope:1');
    expectError(response, 400, 'INVALID_QUERY');
  });
});
