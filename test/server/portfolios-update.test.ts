import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorFields, expectError } from '../helpers/error-body';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

describe('PUT /api/v1/portfolio/{id}', () => {
  let s: TestServer;
  let editorAll: string;
  let editorArt: string;
  let editorNone: string;
  let viewer: string;
  beforeAll(async () => {
    s = await startTestServer({ auth: { signInRequestsPerMinute: 1000 } });
    editorAll = await s.userSession('ed.all', 'editor', ['*']);
    editorArt = await s.userSession('ed.art', 'editor', ['Art']);
    editorNone = await s.userSession('ed.none', 'editor', []);
    viewer = await s.userSession('viewer', 'viewer');
  });
  afterAll(() => s.close());

  const full = {
    relativeCategory: ['Design'],
    aboutProject: 'About',
    projectLanuching: 'Spring',
    readyToBuy: 'yes',
    occasion: ['Party'],
    referenceStyling: ['Retro'],
    generalTag: ['tag1'],
  };
  let n = 0;
  const createOne = async (overrides: Record<string, unknown> = {}) => {
    const response = await s.request('POST', '/api/v1/portfolio', {
      body: portfolioBody({ portfolioId: `pf-${++n}`, ...full, ...overrides }),
    });
    expect(response.status).toBe(201);
    return response.body.portfolioId as string;
  };
  const put = (id: string, body: unknown, session?: string, headers?: Record<string, string>) =>
    s.request('PUT', `/api/v1/portfolio/${id}`, { body, session, headers });
  const detail = async (id: string) => {
    const response = await s.request('GET', `/api/v1/portfolio/${id}`);
    expect(response.status).toBe(200);
    return response.body;
  };
  /** Asserts a refused update left the portfolio exactly as it was. */
  const unchanged = async (id: string, before: unknown) => expect(await detail(id)).toEqual(before);

  it('keeps omitted optional fields, applies the required ones, and increments revision', async () => {
    const id = await createOne();
    const before = await detail(id);
    const response = await put(id, portfolioBody({ projectTitle: 'Renamed' }));
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe('"2"');
    const after = await detail(id);
    expect(after).toEqual({
      ...before,
      projectTitle: 'Renamed',
      revision: 2,
      modifiedTime: expect.any(Number),
    });
    expect(after.modifiedTime).toBeGreaterThanOrEqual(before.modifiedTime);
    expect(after.createdDate).toBe(before.createdDate);
    const third = await put(id, portfolioBody({ projectTitle: 'Renamed' }));
    expect(third.body.revision).toBe(3);
    expect((await detail(id)).revision).toBe(3);
  });

  it('answers with the editor fields and modifiedTime, never the admin fields', async () => {
    const id = await createOne();
    const response = await put(
      id,
      portfolioBody({ certificateByOrg: ['Gold'], certificateDesc: '<p>x</p>', staffPick: true }),
    );
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(
      [
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
        'modifiedTime',
        'revision',
      ].sort(),
    );
    expect(response.body).toMatchObject({ ...portfolioBody(), ...full, revision: 2 });
    const stored = await detail(id);
    expect(response.body.modifiedTime).toBe(stored.modifiedTime);
    expect(stored).toMatchObject({ certificateByOrg: ['Gold'], staffPick: true });
  });

  it('clears optional fields sent as "", [] or null', async () => {
    for (const empty of ['', null] as const) {
      const id = await createOne({ certificateByOrg: undefined });
      await put(id, portfolioBody({ certificateByOrg: ['A'], certificateDesc: '<p>d</p>' }));
      const response = await put(
        id,
        portfolioBody({
          aboutProject: empty,
          projectLanuching: empty,
          readyToBuy: empty,
          referenceStyling: empty,
          occasion: empty === null ? null : [],
          generalTag: empty === null ? null : [],
          relativeCategory: empty === null ? null : [],
          certificateByOrg: empty === null ? null : [],
          certificateDesc: empty,
        }),
      );
      expect(response.status).toBe(200);
      expect(await detail(id)).toMatchObject({
        oboutProject: '',
        projectLanuching: '',
        readyToBuy: '',
        referenceStyling: [],
        occasion: [],
        generalTag: [],
        relativeCategory: [],
        certificateByOrg: [],
        certificateDesc: '',
      });
    }
    // oboutProject clears too, and [] clears referenceStyling.
    const id = await createOne();
    await put(id, portfolioBody({ oboutProject: null, referenceStyling: [] }));
    expect(await detail(id)).toMatchObject({ oboutProject: '', referenceStyling: [] });
  });

  it('accepts referenceStyling as a string and oboutProject as an alias', async () => {
    const id = await createOne();
    const response = await put(
      id,
      portfolioBody({ referenceStyling: 'Baroque', oboutProject: 'O' }),
    );
    expect(response.body).toMatchObject({ referenceStyling: ['Baroque'], aboutProject: 'O' });
    expect(await detail(id)).toMatchObject({ referenceStyling: ['Baroque'], oboutProject: 'O' });
  });

  it('answers 404 for an unknown portfolio and creates nothing', async () => {
    expectError(await put('no-such-id', portfolioBody()), 404, 'PORTFOLIO_NOT_FOUND');
    expectError(await s.request('GET', '/api/v1/portfolio/no-such-id'), 404, 'PORTFOLIO_NOT_FOUND');
  });

  describe('conditional update', () => {
    it('by body revision: current applies, stale gives 409 and changes nothing', async () => {
      const id = await createOne();
      const ok = await put(id, portfolioBody({ revision: 1, projectTitle: 'v2' }));
      expect(ok.status).toBe(200);
      expect(ok.body.revision).toBe(2);
      const before = await detail(id);
      const stale = await put(id, portfolioBody({ revision: 1, projectTitle: 'lost update' }));
      const error = expectError(stale, 409, 'REVISION_CONFLICT');
      expect(error.message).toContain('2');
      await unchanged(id, before);
      const ahead = await put(id, portfolioBody({ revision: 7, projectTitle: 'future' }));
      expectError(ahead, 409, 'REVISION_CONFLICT');
      await unchanged(id, before);
    });

    it('by If-Match: current applies, stale gives 409 and changes nothing', async () => {
      const id = await createOne();
      for (const [value, expected] of [
        ['"1"', 2],
        ['2', 3],
        ['W/"3"', 4],
        ['*', 5], // any revision, as long as the portfolio exists
      ] as const) {
        const ok = await put(id, portfolioBody({ projectTitle: `r${expected}` }), undefined, {
          'if-match': value,
        });
        expect(ok.status, value).toBe(200);
        expect(ok.body.revision).toBe(expected);
      }
      const before = await detail(id);
      const stale = await put(id, portfolioBody({ projectTitle: 'stale' }), undefined, {
        'if-match': '"4"',
      });
      expectError(stale, 409, 'REVISION_CONFLICT');
      await unchanged(id, before);
      const bad = await put(id, portfolioBody({ projectTitle: 'bad' }), undefined, {
        'if-match': 'banana',
      });
      expectError(bad, 400, 'VALIDATION_FAILED');
      expect(errorFields(bad)).toContain('headers.if-match');
      await unchanged(id, before);
    });

    it('lets exactly one of two concurrent updates from the same revision win', async () => {
      const id = await createOne();
      const [a, b] = await Promise.all([
        put(id, portfolioBody({ revision: 1, projectTitle: 'A' })),
        put(id, portfolioBody({ revision: 1, projectTitle: 'B' })),
      ]);
      expect([a.status, b.status].sort()).toEqual([200, 409]);
      const winner = a.status === 200 ? 'A' : 'B';
      expect(await detail(id)).toMatchObject({ projectTitle: winner, revision: 2 });
    });

    it('rejects a revision that is not a positive integer with 400', async () => {
      const id = await createOne();
      for (const revision of [0, -1, 1.5, '1']) {
        const response = await put(id, portfolioBody({ revision }));
        expectError(response, 400, 'VALIDATION_FAILED');
        expect(errorFields(response)).toContain('body.revision');
      }
      expect((await detail(id)).revision).toBe(1);
    });
  });

  describe('commands', () => {
    it('applies each command (admin)', async () => {
      const id = await createOne();
      const steps: Array<[string | undefined, { published: boolean; active: boolean }]> = [
        ['publish', { published: true, active: true }],
        ['save', { published: true, active: true }],
        [undefined, { published: true, active: true }],
        ['deactivate', { published: true, active: false }],
        ['unpublish', { published: false, active: false }],
        ['activate', { published: false, active: true }],
        ['publish', { published: true, active: true }],
        ['publish', { published: true, active: true }],
        ['unpublish', { published: false, active: true }],
      ];
      let revision = 1;
      for (const [command, state] of steps) {
        const response = await put(id, portfolioBody(command ? { command } : {}));
        expect(response.status, String(command)).toBe(200);
        revision++;
        expect(await detail(id), String(command)).toMatchObject({ ...state, revision });
      }
    });

    it('rejects an unknown command with 400 and changes nothing', async () => {
      const id = await createOne();
      const before = await detail(id);
      for (const command of ['archive', 'PUBLISH', '', 1]) {
        const response = await put(id, portfolioBody({ command }));
        expectError(response, 400, 'VALIDATION_FAILED');
        expect(errorFields(response)).toContain('body.command');
      }
      await unchanged(id, before);
    });
  });

  describe('permissions', () => {
    it('editors may send "save" but no other command: 403, nothing changed', async () => {
      const id = await createOne({ category: 'Art' });
      const saved = await put(id, portfolioBody({ category: 'Art', command: 'save' }), editorArt);
      expect(saved.status).toBe(200);
      const before = await detail(id);
      for (const command of ['publish', 'unpublish', 'activate', 'deactivate']) {
        const response = await put(
          id,
          portfolioBody({ category: 'Art', command, projectTitle: 'changed' }),
          editorArt,
        );
        expectError(response, 403, 'FORBIDDEN_FIELD');
        expect(errorFields(response)).toEqual(['body.command']);
      }
      await unchanged(id, before);
    });

    it('admin-only fields give editors 403 and change nothing, even with harmless values', async () => {
      const id = await createOne();
      const before = await detail(id);
      for (const fields of [
        { certificateByOrg: ['Gold'] },
        { certificateByOrg: [] },
        { certificateByOrg: null },
        { certificateDesc: '<p>hi</p>' },
        { certificateDesc: '' },
        { staffPick: true },
        { staffPick: false },
      ]) {
        const response = await put(
          id,
          portfolioBody({ ...fields, projectTitle: 'changed' }),
          editorAll,
        );
        expectError(response, 403, 'FORBIDDEN_FIELD');
        expect(errorFields(response)).toEqual(Object.keys(fields).map((f) => `body.${f}`));
      }
      const many = await put(
        id,
        portfolioBody({ staffPick: true, certificateDesc: 'x', command: 'publish' }),
        editorAll,
      );
      expectError(many, 403, 'FORBIDDEN_FIELD');
      expect(errorFields(many).sort()).toEqual(
        ['body.certificateDesc', 'body.command', 'body.staffPick'].sort(),
      );
      await unchanged(id, before);
    });

    it('allowEdit: listed category and "*" may update; others get 403, nothing changed', async () => {
      const art = await createOne({ category: 'Art' });
      const garden = await createOne({ category: 'Garden' });
      expect(
        (await put(art, portfolioBody({ category: 'Art', projectTitle: 'A2' }), editorArt)).status,
      ).toBe(200);
      expect(
        (await put(garden, portfolioBody({ category: 'Garden', projectTitle: 'G2' }), editorAll))
          .status,
      ).toBe(200);

      const beforeGarden = await detail(garden);
      const notAllowed = await put(
        garden,
        portfolioBody({ category: 'Garden', projectTitle: 'no' }),
        editorArt,
      );
      expectError(notAllowed, 403, 'CATEGORY_NOT_ALLOWED');
      // Moving a foreign portfolio into an allowed category does not help.
      const moveIn = await put(
        garden,
        portfolioBody({ category: 'Art', projectTitle: 'no' }),
        editorArt,
      );
      expectError(moveIn, 403, 'CATEGORY_NOT_ALLOWED');
      await unchanged(garden, beforeGarden);

      // Moving an allowed portfolio into a forbidden category.
      const beforeArt = await detail(art);
      const moveOut = await put(
        art,
        portfolioBody({ category: 'Garden', projectTitle: 'no' }),
        editorArt,
      );
      expectError(moveOut, 403, 'CATEGORY_NOT_ALLOWED');
      expect(errorFields(moveOut)).toEqual(['body.category']);
      await unchanged(art, beforeArt);

      const none = await put(art, portfolioBody({ category: 'Art' }), editorNone);
      expectError(none, 403, 'CATEGORY_NOT_ALLOWED');
      // "*" may move between any categories; admins may edit everything.
      expect((await put(art, portfolioBody({ category: 'Garden' }), editorAll)).status).toBe(200);
      expect((await put(art, portfolioBody({ category: 'Elsewhere' }))).status).toBe(200);
      expect((await detail(art)).category).toBe('Elsewhere');
    });

    it('viewers get 403 and anonymous callers 401; nothing changes', async () => {
      const id = await createOne();
      const before = await detail(id);
      expectError(await put(id, portfolioBody({ projectTitle: 'v' }), viewer), 403, 'FORBIDDEN');
      expectError(
        await s.request('PUT', `/api/v1/portfolio/${id}`, {
          body: portfolioBody({ projectTitle: 'anon' }),
          session: null,
        }),
        401,
        'UNAUTHORIZED',
      );
      await unchanged(id, before);
    });
  });

  describe('certificateDesc sanitizing', () => {
    const store = async (html: string) => {
      const id = await createOne();
      const response = await put(id, portfolioBody({ certificateDesc: html }));
      expect(response.status).toBe(200);
      return (await detail(id)).certificateDesc as string;
    };

    it('removes scripts, event handlers, javascript: URLs and unknown tags', async () => {
      const stored = await store(
        '<p onclick="steal()">Hi<script>alert(1)</script></p>' +
          '<a href="javascript:alert(2)" onmouseover="x()">link</a>' +
          '<img src=x onerror="alert(3)"><iframe src="https://evil.example"></iframe>' +
          '<style>body{display:none}</style><svg onload="alert(4)"></svg>' +
          '<a href="JaVaScRiPt:alert(5)">two</a><a href="data:text/html,<script>1</script>">three</a>',
      );
      expect(stored).not.toMatch(
        /script|onclick|onmouseover|onerror|onload|iframe|<img|<svg|style|data:/i,
      );
      expect(stored).toContain('<p>Hi</p>');
      expect(stored).toContain('link</a>');
      expect(stored).not.toContain('href');
    });

    it('keeps the allowed formatting and safe links', async () => {
      const html =
        '<p>A <strong>bold</strong>, <em>em</em>, <b>b</b>, <i>i</i>, <u>u</u> and <s>s</s> line<br />next</p>' +
        '<h3>Title</h3><h4>Sub</h4><ul><li>one</li></ul><ol><li>two</li></ol>' +
        '<blockquote>quote</blockquote><span>span</span>';
      expect(await store(html)).toBe(html);
      const link = await store('<a href="https://example.com/a?b=1" title="t">ex</a>');
      expect(link).toBe(
        '<a href="https://example.com/a?b=1" title="t" rel="noopener noreferrer" target="_blank">ex</a>',
      );
      expect(await store('<a href="mailto:a@b.example">m</a>')).toContain(
        'href="mailto:a@b.example"',
      );
      expect(await store('<p>plain &amp; text</p>')).toBe('<p>plain &amp; text</p>');
      // Protocol-relative links are refused; link targets are always a new, unlinked tab.
      expect(await store('<a href="//evil.example/x">p</a>')).not.toContain('evil.example');
      expect(await store('<a href="https://ok.example" target="_self" rel="opener">t</a>')).toBe(
        '<a href="https://ok.example" target="_blank" rel="noopener noreferrer">t</a>',
      );
      // Attributes outside the allow-list go, the text stays.
      expect(await store('<p style="color:red" class="x" id="y">s</p>')).toBe('<p>s</p>');
    });
  });

  describe('bad input: 400 naming the field, nothing changed', () => {
    it('missing, blank and mistyped required fields; unknown fields; over-long admin fields', async () => {
      const id = await createOne();
      const before = await detail(id);
      const cases: Array<[Record<string, unknown>, string]> = [];
      for (const field of ['memberBarcode', 'category', 'projectTitle', 'projectDetail']) {
        const without: Record<string, unknown> = portfolioBody();
        delete without[field];
        cases.push([without, `body.${field}`]);
        cases.push([portfolioBody({ [field]: ' ' }), `body.${field}`]);
        cases.push([portfolioBody({ [field]: 3 }), `body.${field}`]);
        cases.push([portfolioBody({ [field]: null }), `body.${field}`]);
      }
      cases.push([portfolioBody({ portfolioId: 'other' }), 'body.portfolioId']);
      cases.push([portfolioBody({ published: true }), 'body.published']);
      cases.push([portfolioBody({ unknownThing: 1 }), 'body.unknownThing']);
      cases.push([portfolioBody({ staffPick: 'true' }), 'body.staffPick']);
      cases.push([portfolioBody({ staffPick: null }), 'body.staffPick']);
      cases.push([portfolioBody({ certificateDesc: 'x'.repeat(50_001) }), 'body.certificateDesc']);
      cases.push([portfolioBody({ certificateByOrg: 'Gold' }), 'body.certificateByOrg']);
      cases.push([portfolioBody({ occasion: 'Party' }), 'body.occasion']);
      cases.push([portfolioBody({ aboutProject: 'a'.repeat(20_001) }), 'body.aboutProject']);
      for (const [body, field] of cases) {
        const response = await put(id, body);
        expectError(response, 400, 'VALIDATION_FAILED');
        expect(errorFields(response), JSON.stringify(body).slice(0, 200)).toContain(field);
      }
      await unchanged(id, before);
    });

    it('a malformed portfolio id in the path gives 400', async () => {
      const response = await put('x'.repeat(65), portfolioBody());
      expectError(response, 400, 'VALIDATION_FAILED');
      expect(errorFields(response)).toContain('params.portfolioId');
    });
  });
});
