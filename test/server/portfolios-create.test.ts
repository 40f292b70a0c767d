import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../shared';
import { errorFields, expectError } from '../helpers/error-body';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

describe('POST /api/v1/portfolio', () => {
  let s: TestServer;
  let editor: string;
  let viewer: string;
  beforeAll(async () => {
    s = await startTestServer({ auth: { signInRequestsPerMinute: 1000 } });
    editor = await s.userSession('creator', 'editor', ['Interior']);
    viewer = await s.userSession('looker', 'viewer');
  });
  afterAll(() => s.close());

  const create = (body: unknown, session?: string) =>
    s.request('POST', '/api/v1/portfolio', { body, session });
  const detail = (id: string) => s.request('GET', `/api/v1/portfolio/${id}`);

  it('answers 201 echoing every submitted field, with portfolioId, createdTime and revision 1', async () => {
    const body = portfolioBody({
      relativeCategory: ['Architecture', 'Timber'],
      aboutProject: 'About the house',
      projectLanuching: '2024-05',
      readyToBuy: 'yes',
      occasion: ['Wedding'],
      referenceStyling: ['Nordic', 'Minimal'],
      generalTag: ['wood', 'lake'],
    });
    const before = Date.now();
    const response = await create(body);
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      ...body,
      portfolioId: expect.any(String),
      createdTime: expect.any(Number),
      revision: 1,
    });
    expect(response.body.portfolioId).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]*$/);
    expect(Number.isInteger(response.body.createdTime)).toBe(true);
    expect(response.body.createdTime).toBeGreaterThanOrEqual(before);
    expect(response.body.createdTime).toBeLessThanOrEqual(Date.now());
    expect(response.headers.get('etag')).toBe('"1"');

    const stored = await detail(response.body.portfolioId);
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({
      portfolioId: response.body.portfolioId,
      oboutProject: 'About the house',
      createdDate: response.body.createdTime,
      modifiedTime: response.body.createdTime,
      revision: 1,
    });
  });

  it('starts unpublished and active, with empty optional and admin fields', async () => {
    const response = await create(portfolioBody());
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      aboutProject: '',
      projectLanuching: '',
      readyToBuy: '',
      occasion: [],
      referenceStyling: [],
      generalTag: [],
      relativeCategory: [],
    });
    const stored = await detail(response.body.portfolioId);
    expect(stored.body).toMatchObject({
      published: false,
      active: true,
      revision: 1,
      staffPick: false,
      certificateByOrg: [],
      certificateDesc: '',
      cover: null,
      draftingProcess: [],
      additionalDocument: [],
    });
  });

  it('assigns distinct ids', async () => {
    const responses = await Promise.all([1, 2, 3, 4].map(() => create(portfolioBody())));
    const ids = responses.map((r) => r.body.portfolioId);
    expect(responses.every((r) => r.status === 201)).toBe(true);
    expect(new Set(ids).size).toBe(4);
  });

  it('keeps a client-made portfolioId, and answers 409 when it is taken', async () => {
    const first = await create(portfolioBody({ portfolioId: 'offline-42', projectTitle: 'First' }));
    expect(first.status).toBe(201);
    expect(first.body.portfolioId).toBe('offline-42');
    const second = await create(
      portfolioBody({ portfolioId: 'offline-42', projectTitle: 'Second' }),
    );
    expectError(second, 409, 'ID_TAKEN');
    expect((await detail('offline-42')).body.projectTitle).toBe('First');
  });

  it('gives exactly one 201 when the same id is created concurrently', async () => {
    const responses = await Promise.all(
      [1, 2, 3, 4, 5].map((n) =>
        create(portfolioBody({ portfolioId: 'race-id', projectTitle: `T${n}` })),
      ),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409]);
    const winner = responses.find((r) => r.status === 201)!;
    expect((await detail('race-id')).body.projectTitle).toBe(winner.body.projectTitle);
  });

  it('rejects a malformed client portfolioId with 400', async () => {
    for (const portfolioId of ['', 'has space', '-leading', 'a/b', 'x'.repeat(65), 7]) {
      const response = await create(portfolioBody({ portfolioId }));
      expectError(response, 400, 'VALIDATION_FAILED');
      expect(errorFields(response)).toContain('body.portfolioId');
    }
  });

  it('stores referenceStyling given as a string as an array', async () => {
    const response = await create(portfolioBody({ referenceStyling: 'Art Deco' }));
    expect(response.status).toBe(201);
    expect(response.body.referenceStyling).toEqual(['Art Deco']);
    expect((await detail(response.body.portfolioId)).body.referenceStyling).toEqual(['Art Deco']);
    const empty = await create(portfolioBody({ referenceStyling: '' }));
    expect(empty.body.referenceStyling).toEqual([]);
  });

  it('accepts aboutProject under the detail spelling oboutProject', async () => {
    const response = await create(portfolioBody({ oboutProject: 'Spelled the detail way' }));
    expect(response.status).toBe(201);
    expect(response.body.aboutProject).toBe('Spelled the detail way');
    expect(response.body).not.toHaveProperty('oboutProject');
    expect((await detail(response.body.portfolioId)).body.oboutProject).toBe(
      'Spelled the detail way',
    );
    const same = await create(portfolioBody({ aboutProject: 'x', oboutProject: 'x' }));
    expect(same.status).toBe(201);
    const conflicting = await create(
      portfolioBody({ portfolioId: 'alias-conflict', aboutProject: 'x', oboutProject: 'y' }),
    );
    expectError(conflicting, 400, 'VALIDATION_FAILED');
    expect(errorFields(conflicting)).toContain('body.oboutProject');
    expect((await detail('alias-conflict')).status).toBe(404);
  });

  it('lets editors create only in the categories they may edit; viewers get 403 and nothing is created', async () => {
    const byEditor = await create(portfolioBody({ category: 'Interior' }), editor);
    expect(byEditor.status).toBe(201);
    const elsewhere = await create(
      portfolioBody({ portfolioId: 'elsewhere', category: 'Anything' }),
      editor,
    );
    expectError(elsewhere, 403, 'CATEGORY_NOT_ALLOWED');
    expect((await detail('elsewhere')).status).toBe(404);
    const byViewer = await create(portfolioBody({ portfolioId: 'viewer-made' }), viewer);
    expectError(byViewer, 403, 'FORBIDDEN');
    expect((await detail('viewer-made')).status).toBe(404);
    const anonymous = await s.request('POST', '/api/v1/portfolio', {
      body: portfolioBody({ portfolioId: 'anon-made' }),
      session: null,
    });
    expectError(anonymous, 401, 'UNAUTHORIZED');
    expect((await detail('anon-made')).status).toBe(404);
  });

  describe('bad input: 400 naming the field, nothing created', () => {
    const required = {
      memberBarcode: LIMITS.memberBarcode,
      category: LIMITS.category,
      projectTitle: LIMITS.projectTitle,
      projectDetail: LIMITS.projectDetail,
    } as const;
    let n = 0;
    const expectRejected = async (body: Record<string, unknown>, field: string) => {
      const portfolioId = `rejected-${++n}`;
      const response = await create({ ...body, portfolioId });
      const error = expectError(response, 400, 'VALIDATION_FAILED');
      expect(errorFields(response), JSON.stringify(response.body)).toContain(field);
      // The message is the first detail's, in plain words (the field is named in details).
      expect(error.message).toBe(error.details[0]!.message);
      expect(error.message).not.toMatch(/must NOT|must match|body\./);
      expect((await detail(portfolioId)).status).toBe(404);
    };

    for (const [field, limit] of Object.entries(required)) {
      it(`${field}: missing, blank, wrong type, over-long`, async () => {
        const without: Record<string, unknown> = portfolioBody();
        delete without[field];
        await expectRejected(without, `body.${field}`);
        await expectRejected(portfolioBody({ [field]: '' }), `body.${field}`);
        await expectRejected(portfolioBody({ [field]: '   ' }), `body.${field}`);
        await expectRejected(portfolioBody({ [field]: 42 }), `body.${field}`);
        await expectRejected(portfolioBody({ [field]: ['x'] }), `body.${field}`);
        await expectRejected(portfolioBody({ [field]: null }), `body.${field}`);
        await expectRejected(portfolioBody({ [field]: 'A'.repeat(limit + 1) }), `body.${field}`);
        // Exactly at the limit is fine.
        const atLimit = await create(portfolioBody({ [field]: 'A'.repeat(limit) }));
        expect(atLimit.status).toBe(201);
      });
    }

    it('optional text fields: wrong type and over-long', async () => {
      const texts = {
        aboutProject: LIMITS.aboutProject,
        oboutProject: LIMITS.aboutProject,
        projectLanuching: LIMITS.projectLanuching,
        readyToBuy: LIMITS.readyToBuy,
      };
      for (const [field, limit] of Object.entries(texts)) {
        await expectRejected(portfolioBody({ [field]: 5 }), `body.${field}`);
        await expectRejected(portfolioBody({ [field]: ['a'] }), `body.${field}`);
        await expectRejected(portfolioBody({ [field]: 'a'.repeat(limit + 1) }), `body.${field}`);
      }
    });

    it('list fields: wrong type, bad items, too many items', async () => {
      for (const field of ['occasion', 'generalTag', 'relativeCategory', 'referenceStyling']) {
        await expectRejected(portfolioBody({ [field]: 5 }), `body.${field}`);
        await expectRejected(portfolioBody({ [field]: [1, 2] }), `body.${field}.0`);
        await expectRejected(portfolioBody({ [field]: ['ok', ''] }), `body.${field}.1`);
        await expectRejected(portfolioBody({ [field]: ['t'.repeat(101)] }), `body.${field}.0`);
        await expectRejected(
          portfolioBody({ [field]: Array.from({ length: 51 }, (_, i) => `tag${i}`) }),
          `body.${field}`,
        );
      }
      // A long single-string referenceStyling too.
      await expectRejected(
        portfolioBody({ referenceStyling: 's'.repeat(101) }),
        'body.referenceStyling',
      );
    });

    it('unknown fields, and fields only update knows', async () => {
      for (const field of [
        'colour',
        'published',
        'revision',
        'staffPick',
        'command',
        'createdTime',
      ]) {
        await expectRejected(portfolioBody({ [field]: true }), `body.${field}`);
      }
    });

    it('a body that is not an object', async () => {
      for (const body of [[], 'text', 42, null]) {
        const response = await s.request('POST', '/api/v1/portfolio', {
          body: JSON.stringify(body),
        });
        expectError(response, 400, 'VALIDATION_FAILED');
      }
    });

    it('reports every bad field at once', async () => {
      const response = await create({ memberBarcode: '', projectTitle: 5, extra: 1 });
      expectError(response, 400, 'VALIDATION_FAILED');
      expect(errorFields(response)).toEqual(
        expect.arrayContaining([
          'body.memberBarcode',
          'body.category',
          'body.projectTitle',
          'body.projectDetail',
          'body.extra',
        ]),
      );
    });
  });
});
