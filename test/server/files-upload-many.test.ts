import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/error-body';
import { download, fixtures } from '../helpers/file-fixtures';
import {
  checkAnswer,
  portfolioBody,
  startTestServer,
  type TestServer,
} from '../helpers/test-server';

describe('several files in one upload make one revision (DESIGN §16)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ limits: { filesPerList: 4 } });
  });
  afterAll(() => s.close());

  async function create(): Promise<string> {
    const created = await s.request('POST', '/api/v1/portfolio', { body: portfolioBody() });
    return created.body.portfolioId;
  }

  /** One multipart request: each file, then its description when it has one. */
  async function uploadMany(
    path: string,
    files: Array<{ bytes: Buffer; name: string; description?: string }>,
  ) {
    const form = new FormData();
    for (const file of files) {
      form.append('file', new Blob([new Uint8Array(file.bytes)]), file.name);
      if (file.description !== undefined) form.append('description', file.description);
    }
    const response = await fetch(s.url + path, {
      method: 'POST',
      headers: { authorization: s.adminSession },
      body: form,
    });
    const body = await response.json();
    checkAnswer(s.app, 'POST', path, response, body);
    return { status: response.status, body, headers: response.headers };
  }

  it('adds three files as one revision, each with its description, bytes as sent', async () => {
    const id = await create();
    const jpeg = await fixtures.jpeg();
    const png = await fixtures.png();
    const pdf = fixtures.pdf();
    const added = await uploadMany(`/api/v1/portfolio/${id}/draftingProcess`, [
      { bytes: jpeg, name: 'one.jpg', description: 'First sketch' },
      { bytes: png, name: 'two.png' },
      { bytes: pdf, name: 'three.pdf', description: 'Plan' },
    ]);
    expect(added.status).toBe(201);
    expect(added.headers.get('etag')).toBe('"2"');
    expect(added.body.revision).toBe(2);
    expect(
      added.body.files.map((file: { originalFilename: string; description: string }) => [
        file.originalFilename,
        file.description,
      ]),
    ).toEqual([
      ['one.jpg', 'First sketch'],
      ['two.png', ''],
      ['three.pdf', 'Plan'],
    ]);
    const history = await s.request('GET', `/api/v1/portfolio/${id}/revisions`);
    expect(history.body.total).toBe(2);
    expect(history.body.revisions[0]).toMatchObject({
      command: 'file',
      changedFields: ['draftingProcess'],
    });
    const detail = await s.request(
      'GET',
      `/api/v1/portfolio/${id}?field=draftingProcess.fileID,revision`,
    );
    expect(detail.body.draftingProcess).toHaveLength(3);
    const third = await download(s, `/api/v1/portfolio/${id}/files/${added.body.files[2].fileID}`);
    expect(Buffer.compare(third.bytes, pdf)).toBe(0);
  });

  it('refuses them all when the list has no room for all, or one is refused', async () => {
    const id = await create();
    const jpeg = await fixtures.jpeg();
    const five = Array.from({ length: 5 }, (_, i) => ({ bytes: jpeg, name: `p${i}.jpg` }));
    const tooMany = await uploadMany(`/api/v1/portfolio/${id}/draftingProcess`, five);
    expectError(tooMany, 413, 'TOO_MANY_FILES');
    const wrongKind = await uploadMany(`/api/v1/portfolio/${id}/draftingProcess`, [
      { bytes: jpeg, name: 'ok.jpg' },
      { bytes: Buffer.from('just text'), name: 'notes.txt' },
    ]);
    expectError(wrongKind, 415, 'UNSUPPORTED_FILE_TYPE');
    const detail = await s.request('GET', `/api/v1/portfolio/${id}`);
    expect(detail.body).toMatchObject({ revision: 1, draftingProcess: [] });
  });
});
