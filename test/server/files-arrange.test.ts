import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures, uploadJson } from '../helpers/file-fixtures';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

/** Reorder, make cover, describe several: each one action, one revision, like any file change. */
describe('arranging the files of a portfolio', () => {
  let server: TestServer;
  let viewer: string;
  beforeAll(async () => {
    server = await startTestServer();
    viewer = await server.userSession('viewer1', 'viewer');
  });
  afterAll(() => server?.close());

  /** A portfolio with a cover, three drafting images and a PDF among them, and a document. */
  async function portfolioWithFiles() {
    const created = await server.request('POST', '/api/v1/portfolio', { body: portfolioBody() });
    const id = created.body.portfolioId as string;
    const base = `/api/v1/portfolio/${id}`;
    const cover = await uploadJson(server, `${base}/cover`, await fixtures.png(), {
      filename: 'front.png',
    });
    const drafting: string[] = [];
    for (const name of ['a.jpg', 'b.jpg', 'c.jpg']) {
      const added = await uploadJson(server, `${base}/draftingProcess`, await fixtures.jpeg(), {
        filename: name,
      });
      drafting.push(added.body.fileID);
    }
    const pdf = await uploadJson(server, `${base}/draftingProcess`, fixtures.pdf(), {
      filename: 'plan.pdf',
    });
    const doc = await uploadJson(server, `${base}/additionalDocument`, fixtures.text(), {
      filename: 'notes.txt',
    });
    const detail = (await server.request('GET', `${base}?field=revision`)).body;
    return {
      id,
      base,
      cover: cover.body.fileId as string,
      drafting,
      pdf: pdf.body.fileID as string,
      doc: doc.body.fileID as string,
      revision: detail.revision as number,
    };
  }
  const detailOf = async (base: string) =>
    (await server.request('GET', `${base}?field=cover,draftingProcess,additionalDocument,revision`))
      .body;
  const revisions = async (base: string) =>
    (await server.request('GET', `${base}/revisions`)).body.revisions as Array<{
      revision: number;
      command: string;
      changedFields: string[];
    }>;

  it('reorders the drafting images in one revision, conditionally, and only as a permutation', async () => {
    const p = await portfolioWithFiles();
    const [a, b, c] = p.drafting as [string, string, string];
    const order = `${p.base}/draftingProcess/order`;
    const wanted = [p.pdf, c, a, b];

    const done = await server.request('PUT', order, {
      body: { fileIds: wanted },
      headers: { 'if-match': `"${p.revision}"` },
    });
    expect(done.status).toBe(200);
    expect(done.headers.get('etag')).toBe(`"${p.revision + 1}"`);
    expect(done.body.revision).toBe(p.revision + 1);
    expect(done.body.draftingProcess.map((file: { fileID: string }) => file.fileID)).toEqual(
      wanted,
    );
    const after = await detailOf(p.base);
    expect(after.draftingProcess.map((file: { fileID: string }) => file.fileID)).toEqual(wanted);
    const [newest] = await revisions(p.base);
    expect(newest).toMatchObject({ revision: p.revision + 1, command: 'reorder' });
    expect(newest!.changedFields).toContain('draftingProcess');

    // A stale If-Match: 409 as every write answers it, and nothing changes.
    const stale = await server.request('PUT', order, {
      body: { fileIds: [a, b, c, p.pdf] },
      headers: { 'if-match': `"${p.revision}"` },
    });
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe('REVISION_CONFLICT');

    // Not a permutation of today's list: 400 in plain words, on body.fileIds.
    const refusals = [
      { fileIds: [a, b, c], words: /leaves out one drafting image/ },
      { fileIds: [a, a, b, c, p.pdf], words: /names one drafting image twice/ },
      { fileIds: [a, b, c, p.pdf, p.doc], words: /not among the drafting images/ },
    ];
    for (const { fileIds, words } of refusals) {
      const refused = await server.request('PUT', order, { body: { fileIds } });
      expect(refused.status).toBe(400);
      expect(refused.body.code).toBe('VALIDATION_FAILED');
      expect(refused.body.message).toMatch(words);
      expect(refused.body.details[0].field).toBe('body.fileIds');
    }
    const wrongShape = await server.request('PUT', order, { body: { fileIds: 'a' } });
    expect(wrongShape.status).toBe(400);
    expect((await detailOf(p.base)).revision).toBe(p.revision + 1);

    // A viewer: 403 before the body is read.
    const byViewer = await server.request('PUT', order, {
      body: { fileIds: wanted },
      session: viewer,
    });
    expect(byViewer.status).toBe(403);
  });

  it('makes a drafting image the cover, the old cover taking its place, in one revision', async () => {
    const p = await portfolioWithFiles();
    const [a, b, c] = p.drafting as [string, string, string];
    const made = await server.request('POST', `${p.base}/files/${b}/make-cover`, {
      headers: { 'if-match': `"${p.revision}"` },
    });
    expect(made.status).toBe(200);
    expect(made.headers.get('etag')).toBe(`"${p.revision + 1}"`);
    expect(made.body.cover.fileId).toBe(b);
    const after = await detailOf(p.base);
    expect(after.revision).toBe(p.revision + 1);
    expect(after.cover.fileId).toBe(b);
    expect(after.draftingProcess.map((file: { fileID: string }) => file.fileID)).toEqual([
      a,
      p.cover,
      c,
      p.pdf,
    ]);
    expect((await revisions(p.base))[0]).toMatchObject({ command: 'cover' });

    // The cover's bytes are served as the cover now.
    const bytes = await fetch(`${server.url}/api/v1/portfolio/${p.id}/files/${b}`, {
      headers: { authorization: server.adminSession },
    });
    expect(bytes.status).toBe(200);
    expect(bytes.headers.get('content-type')).toBe('image/jpeg');

    // The cover itself: no change, no revision.
    const same = await server.request('POST', `${p.base}/files/${b}/make-cover`);
    expect(same.status).toBe(200);
    expect(same.body.revision).toBe(p.revision + 1);

    // A PDF cannot be the cover; a document is not a drafting image; a stale If-Match; a viewer.
    const pdf = await server.request('POST', `${p.base}/files/${p.pdf}/make-cover`);
    expect(pdf.status).toBe(415);
    expect(pdf.body.message).toMatch(/PDF.*cannot be used as the cover/);
    const doc = await server.request('POST', `${p.base}/files/${p.doc}/make-cover`);
    expect(doc.status).toBe(400);
    expect(doc.body.message).toMatch(/Only a drafting image can be made the cover/);
    const stale = await server.request('POST', `${p.base}/files/${a}/make-cover`, {
      headers: { 'if-match': `"${p.revision}"` },
    });
    expect(stale.status).toBe(409);
    const byViewer = await server.request('POST', `${p.base}/files/${a}/make-cover`, {
      session: viewer,
    });
    expect(byViewer.status).toBe(403);
    const missing = await server.request('POST', `${p.base}/files/nope/make-cover`);
    expect(missing.status).toBe(404);
    expect((await detailOf(p.base)).revision).toBe(p.revision + 1);
  });

  it('gives several files one description in one revision', async () => {
    const p = await portfolioWithFiles();
    const [a, , c] = p.drafting as [string, string, string];
    const described = await server.request('PATCH', `${p.base}/files`, {
      body: { fileIds: [p.cover, a, c, p.doc], description: 'Site visit, May' },
      headers: { 'if-match': `"${p.revision}"` },
    });
    expect(described.status).toBe(200);
    expect(described.body.revision).toBe(p.revision + 1);
    expect(described.body.files).toHaveLength(4);
    expect(described.body.files[0]).toMatchObject({ fileId: p.cover });
    expect(described.body.files[1]).toMatchObject({ fileID: a });
    const after = await detailOf(p.base);
    expect(after.revision).toBe(p.revision + 1);
    expect(after.cover.description).toBe('Site visit, May');
    expect(after.draftingProcess.map((file: { description: string }) => file.description)).toEqual([
      'Site visit, May',
      '',
      'Site visit, May',
      '',
    ]);
    expect(after.additionalDocument[0].description).toBe('Site visit, May');
    expect((await revisions(p.base))[0]).toMatchObject({ command: 'describe' });

    const unknown = await server.request('PATCH', `${p.base}/files`, {
      body: { fileIds: [a, 'nope'], description: 'x' },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('FILE_NOT_FOUND');
    const tooLong = await server.request('PATCH', `${p.base}/files`, {
      body: { fileIds: [a], description: 'x'.repeat(1001) },
    });
    expect(tooLong.status).toBe(400);
    const stale = await server.request('PATCH', `${p.base}/files`, {
      body: { fileIds: [a], description: 'y' },
      headers: { 'if-match': `"${p.revision}"` },
    });
    expect(stale.status).toBe(409);
    const byViewer = await server.request('PATCH', `${p.base}/files`, {
      body: { fileIds: [a], description: 'y' },
      session: viewer,
    });
    expect(byViewer.status).toBe(403);
    expect((await detailOf(p.base)).revision).toBe(p.revision + 1);
  });
});
