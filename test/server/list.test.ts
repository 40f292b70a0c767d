import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/error-body';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

interface Seed {
  portfolioId: string;
  category: string;
  projectTitle: string;
  memberBarcode: string;
  relativeCategory?: string[];
  readyToBuy?: string;
  certificateByOrg?: string[];
  staffPick?: boolean;
  publish?: boolean;
  deactivate?: boolean;
}

/** Varied enough that every key sorts and filters differently; ids make ties predictable. */
const SEEDS: Seed[] = [
  {
    portfolioId: 'p01',
    category: 'Interior',
    projectTitle: 'Lake house',
    memberBarcode: 'M1',
    publish: true,
    staffPick: true,
    relativeCategory: ['Wood', 'Glass'],
    certificateByOrg: ['Gold'],
  },
  {
    portfolioId: 'p02',
    category: 'art',
    projectTitle: 'apple orchard',
    memberBarcode: 'M2',
    publish: true,
    readyToBuy: 'yes',
  },
  {
    portfolioId: 'p03',
    category: 'Art',
    projectTitle: 'Zebra, Stripes',
    memberBarcode: 'M1',
    publish: true,
    relativeCategory: ['Glass'],
  },
  {
    portfolioId: 'p04',
    category: 'Fashion',
    projectTitle: 'Back\\slash',
    memberBarcode: 'M3',
    staffPick: true,
    certificateByOrg: ['Silver', 'Gold'],
  },
  {
    portfolioId: 'p05',
    category: 'Art',
    projectTitle: 'LAKE view',
    memberBarcode: 'M2',
    publish: true,
    deactivate: true,
  },
  {
    portfolioId: 'p06',
    category: 'Interior',
    projectTitle: 'Kitchen',
    memberBarcode: 'M4',
    publish: true,
    readyToBuy: 'no',
  },
  {
    portfolioId: 'p07',
    category: 'Fashion',
    projectTitle: 'apple orchard',
    memberBarcode: 'M5',
    publish: true,
    staffPick: true,
  },
  { portfolioId: 'p08', category: 'Interior', projectTitle: 'Attic', memberBarcode: 'M1' },
];

type Item = Record<string, any>;
const ALL_FIELDS =
  'portfolioId,projectTitle,category,memberBarcode,published,active,staffPick,createdTime,modifiedTime,revision';

/** Independent model of DESIGN §4's order: case-insensitive text, then raw text, then id. */
function expectedOrder(items: Item[], orderBy: string): string[] {
  const terms = orderBy.split(',').map((token) => ({
    key: token.replace(/-$/, ''),
    sign: token.endsWith('-') ? -1 : 1,
  }));
  const value = (item: Item, key: string): [string | number, string | number] => {
    const raw = item[key];
    if (typeof raw === 'string') return [raw.toLowerCase(), raw];
    if (typeof raw === 'boolean') return [raw ? 1 : 0, 0];
    return [raw, 0];
  };
  return [...items]
    .sort((a, b) => {
      for (const { key, sign } of terms) {
        const [a1, a2] = value(a, key);
        const [b1, b2] = value(b, key);
        if (a1 !== b1) return (a1 < b1 ? -1 : 1) * sign;
        if (a2 !== b2) return (a2 < b2 ? -1 : 1) * sign;
      }
      return a.portfolioId < b.portfolioId ? -1 : 1;
    })
    .map((item) => item.portfolioId);
}

const q = (params: Record<string, string | number>) =>
  '/api/v1/portfolio?' +
  new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]));

describe('GET /api/v1/portfolio', () => {
  let server: TestServer;
  let viewer: string;
  let editor: string;
  let everything: Item[];

  const list = (params: Record<string, string | number> = {}, session?: string) =>
    server.request('GET', q(params), { session });
  const ids = async (params: Record<string, string | number>, session?: string) => {
    const response = await list({ pageSize: 1000, ...params }, session);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return (response.body.lists as Item[]).map((item) => item.portfolioId);
  };

  beforeAll(async () => {
    server = await startTestServer();
    for (const seed of SEEDS) {
      const { publish, deactivate, staffPick, certificateByOrg, portfolioId, ...editable } = seed;
      const fields = { portfolioId, ...editable };
      const created = await server.request('POST', '/api/v1/portfolio', {
        body: portfolioBody(fields),
      });
      expect(created.status).toBe(201);
      const admin = { staffPick, certificateByOrg };
      if (publish || deactivate || staffPick || certificateByOrg) {
        for (const command of [publish && 'publish', deactivate && 'deactivate', 'save']) {
          if (!command) continue;
          const updated = await server.request('PUT', `/api/v1/portfolio/${seed.portfolioId}`, {
            body: portfolioBody({ ...editable, ...admin, command }),
          });
          expect(updated.status, JSON.stringify(updated.body)).toBe(200);
        }
      }
    }
    viewer = await server.userSession('vera', 'viewer');
    editor = await server.userSession('eddie', 'editor', ['*']);
    const all = await list({ pageSize: 1000, field: ALL_FIELDS });
    everything = all.body.lists;
  });
  afterAll(() => server.close());

  describe('response shape and defaults', () => {
    it('answers the interface keys with result = page items, total = matches, "" token on the last page', async () => {
      const response = await list();
      expect(response.status).toBe(200);
      expect(Object.keys(response.body).sort()).toEqual([
        'lists',
        'nextPageToken',
        'result',
        'total',
      ]);
      expect(response.body).toMatchObject({ result: 8, total: 8, nextPageToken: '' });
      // Default fields: the interface's keys only, cover (null: no cover uploaded) included.
      expect(response.body.lists[0]).toEqual({
        portfolioId: 'p01',
        projectTitle: 'Lake house',
        cover: null,
      });
    });

    it('orders by createdTime ascending by default, ties by portfolioId', async () => {
      expect(await ids({})).toEqual(expectedOrder(everything, 'createdTime'));
    });

    it('keeps lists, result, total and nextPageToken whatever field says', async () => {
      const response = await list({ field: 'portfolioId', pageSize: 2 });
      expect(response.body.lists).toEqual([{ portfolioId: 'p01' }, { portfolioId: 'p02' }]);
      expect(response.body.result).toBe(2);
      expect(response.body.total).toBe(8);
      expect(response.body.nextPageToken).not.toBe('');
    });
  });

  describe('orderBy', () => {
    it.each([
      'projectTitle',
      'projectTitle-',
      'category,projectTitle-',
      'category-,createdTime',
      'staffPick-,category',
      'staffPick',
      'modifiedTime-',
      'createdTime-',
    ])('sorts by %s with portfolioId breaking ties', async (orderBy) => {
      expect(await ids({ orderBy })).toEqual(expectedOrder(everything, orderBy));
    });

    it('sorts text case-insensitively and breaks equal titles by portfolioId ascending, even descending', async () => {
      const order = await ids({ orderBy: 'projectTitle-' });
      expect(order.indexOf('p02')).toBeLessThan(order.indexOf('p07')); // both "apple orchard"
      expect(order.at(-1)).toBe('p07');
    });

    it.each([
      [
        'title',
        /Unknown orderBy key "title"; valid keys: createdTime, modifiedTime, projectTitle, category, staffPick/,
      ],
      ['createdTime,', /empty key/],
      ['createdTime+', /Unknown orderBy key "createdTime\+"/],
      ['category,category-', /names "category" twice/],
    ])('rejects orderBy=%s with 400', async (orderBy, message) => {
      const body = expectError(await list({ orderBy }), 400, 'INVALID_QUERY');
      expect(body.message).toMatch(message);
      expect(body.details[0]!.field).toBe('querystring.orderBy');
    });
  });

  describe('filter', () => {
    it.each([
      ['category:Art', ['p02', 'p03', 'p05']], // exact, whatever the case
      ['category:ART', ['p02', 'p03', 'p05']],
      ['category:Art,category:Fashion', ['p02', 'p03', 'p04', 'p05', 'p07']], // same key ORs
      ['category:Interior,memberBarcode:M1', ['p01', 'p08']], // keys AND
      ['projectTitle:lake', ['p01', 'p05']], // case-insensitive substring
      ['projectTitle:APPLE,category:Fashion', ['p07']],
      ['relativeCategory:Glass', ['p01', 'p03']], // array membership
      ['certificateByOrg:Gold', ['p01', 'p04']],
      ['certificateByOrg:Silver,certificateByOrg:Nope', ['p04']],
      ['readyToBuy:yes', ['p02']],
      ['readyToBuy:', ['p01', 'p03', 'p04', 'p05', 'p07', 'p08']], // exact: empty value
      ['staffPick:true', ['p01', 'p04', 'p07']],
      ['staffPick:false', ['p02', 'p03', 'p05', 'p06', 'p08']],
      ['staffPick:true,staffPick:false', ['p01', 'p02', 'p03', 'p04', 'p05', 'p06', 'p07', 'p08']],
      ['projectTitle:zebra\\, stripes', ['p03']], // \, is a comma inside the value
      ['projectTitle:back\\\\slash', ['p04']], // \\ is a backslash
      ['projectTitle:house:x', []], // split at the first colon only
      ['memberBarcode:nobody', []],
      ['published:false', ['p04', 'p08']],
      ['active:false', ['p05']],
      ['published:true,active:true', ['p01', 'p02', 'p03', 'p06', 'p07']],
    ])('filter=%s', async (filter, expected) => {
      const response = await list({ filter, pageSize: 1000, orderBy: 'createdTime' });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body.lists.map((item: Item) => item.portfolioId).sort()).toEqual(expected);
      expect(response.body.total).toBe(expected.length);
    });

    it('combines filter with orderBy', async () => {
      const filter = 'category:Interior,category:Fashion';
      const matching = everything.filter((item) => ['Interior', 'Fashion'].includes(item.category));
      expect(await ids({ filter, orderBy: 'projectTitle-' })).toEqual(
        expectedOrder(matching, 'projectTitle-'),
      );
    });

    it.each([
      ['category', /has no ":"/],
      ['category:Art,oops', /"oops" has no ":"/],
      ['projectTitle:abc\\', /dangling/],
      ['projectTitle:a\\b', /unknown escape "\\b"/],
      [
        'colour:red',
        /Unknown filter key "colour"; valid keys: memberBarcode, category, relativeCategory, readyToBuy, certificateByOrg, staffPick, projectTitle, published, active/,
      ],
      ['staffPick:yes', /takes true or false/],
      ['published:1', /takes true or false/],
    ])('rejects filter=%s with 400 saying what is allowed', async (filter, message) => {
      const body = expectError(await list({ filter }), 400, 'INVALID_QUERY');
      expect(body.message).toMatch(message);
      expect(body.details[0]!.field).toBe('querystring.filter');
    });

    it('lets editors filter on published and active, but not viewers', async () => {
      expect((await ids({ filter: 'published:false' }, editor)).sort()).toEqual(['p04', 'p08']);
      const body = expectError(
        await list({ filter: 'published:false' }, viewer),
        400,
        'INVALID_QUERY',
      );
      expect(body.message).toMatch(/"published" is for editors and admins/);
      expect(body.message).not.toMatch(/valid keys:.*published/);
    });
  });

  describe('viewers', () => {
    it('see only published and active portfolios, and total counts only those', async () => {
      const response = await list({ pageSize: 1000 }, viewer);
      expect(response.body.lists.map((item: Item) => item.portfolioId).sort()).toEqual([
        'p01',
        'p02',
        'p03',
        'p06',
        'p07',
      ]);
      expect(response.body.total).toBe(5);
      const filtered = await list({ filter: 'category:aRT' }, viewer);
      expect(filtered.body).toMatchObject({ total: 2, result: 2 });
      expect(filtered.body.lists.map((item: Item) => item.portfolioId).sort()).toEqual([
        'p02',
        'p03',
      ]);
    });
  });

  describe('field', () => {
    it('selects the extension fields the gallery cards need', async () => {
      const response = await list({
        field: 'portfolioId,category,memberBarcode,published,active,staffPick,revision',
        pageSize: 1,
      });
      expect(response.body.lists[0]).toEqual({
        portfolioId: 'p01',
        category: 'Interior',
        memberBarcode: 'M1',
        published: true,
        active: true,
        staffPick: true,
        revision: 3,
      });
    });

    it('accepts every cover sub-field; a portfolio without a cover answers cover: null', async () => {
      const field = 'portfolioId,cover.fileId,cover.data,cover.dimention.width,cover.md5Checksum';
      const response = await list({ field, pageSize: 1 });
      expect(response.status).toBe(200);
      expect(response.body.lists[0]).toEqual({ portfolioId: 'p01', cover: null });
    });

    it.each([
      [
        'portfolioId,colour',
        /Unknown field "colour"; valid keys: portfolioId, projectTitle, cover, cover\.fileId/,
      ],
      ['cover.dimention.depth', /Unknown field "cover.dimention.depth"/],
      ['portfolioId,', /empty key/],
      ['oboutProject', /Unknown field "oboutProject"/],
    ])('rejects field=%s with 400', async (field, message) => {
      const body = expectError(await list({ field }), 400, 'INVALID_QUERY');
      expect(body.message).toMatch(message);
      expect(body.details[0]!.field).toBe('querystring.field');
    });
  });

  describe('pageSize', () => {
    it.each(['0', '1001', '-1', 'abc', '1.5', ''])(
      'rejects pageSize=%s with 400',
      async (pageSize) => {
        const response = await server.request('GET', `/api/v1/portfolio?pageSize=${pageSize}`);
        expect(response.status).toBe(400);
        expect(JSON.stringify(response.body)).toMatch(/pageSize/);
      },
    );

    it('accepts 1 and 1000', async () => {
      expect((await list({ pageSize: 1 })).body.result).toBe(1);
      expect((await list({ pageSize: 1000 })).body.result).toBe(8);
    });
  });

  it('rejects unknown query parameters naming them', async () => {
    const response = await server.request('GET', '/api/v1/portfolio?sort=createdTime');
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body)).toContain('querystring.sort');
  });

  it('needs a session', async () => {
    expectError(
      await server.request('GET', '/api/v1/portfolio', { session: null }),
      401,
      'UNAUTHORIZED',
    );
  });

  describe('paging', () => {
    const walk = async (params: Record<string, string | number>, session?: string) => {
      const seen: string[] = [];
      const totals = new Set<number>();
      let token = '';
      for (let pages = 0; pages < 100; pages++) {
        const response = await list({ ...params, ...(token ? { pageToken: token } : {}) }, session);
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        seen.push(...response.body.lists.map((item: Item) => item.portfolioId));
        expect(response.body.result).toBe(response.body.lists.length);
        totals.add(response.body.total);
        token = response.body.nextPageToken;
        if (token === '') return { seen, totals, pages: pages + 1 };
      }
      throw new Error('paging did not end');
    };

    it.each(['createdTime', 'projectTitle-', 'category,staffPick-', 'staffPick'])(
      'walks orderBy=%s page by page to exactly the full order',
      async (orderBy) => {
        const { seen, totals, pages } = await walk({ orderBy, pageSize: 3 });
        expect(seen).toEqual(expectedOrder(everything, orderBy));
        expect([...totals]).toEqual([8]);
        expect(pages).toBe(3);
      },
    );

    it('pages through a filtered view (also the viewer view)', async () => {
      const { seen } = await walk({ filter: 'category:Interior,category:Art', pageSize: 2 });
      expect(seen.sort()).toEqual(['p01', 'p02', 'p03', 'p05', 'p06', 'p08']);
      const asViewer = await walk({ pageSize: 2, orderBy: 'projectTitle' }, viewer);
      const visible = everything.filter((item) => item.published && item.active);
      expect(asViewer.seen).toEqual(expectedOrder(visible, 'projectTitle'));
      expect(asViewer.seen).toHaveLength(5);
    });

    it('ends with "" when the last page is exactly full', async () => {
      const first = await list({ pageSize: 4 });
      const second = await list({ pageSize: 4, pageToken: first.body.nextPageToken });
      expect(second.body.result).toBe(4);
      expect(second.body.nextPageToken).toBe('');
    });

    it('lets pageSize change between pages', async () => {
      const first = await list({ pageSize: 2 });
      const rest = await list({ pageSize: 100, pageToken: first.body.nextPageToken });
      expect(
        [...first.body.lists, ...rest.body.lists].map((item: Item) => item.portfolioId),
      ).toEqual(expectedOrder(everything, 'createdTime'));
    });
  });

  describe('pageToken', () => {
    const firstToken = async (params: Record<string, string | number> = {}, session?: string) =>
      (await list({ pageSize: 2, ...params }, session)).body.nextPageToken as string;

    it('is opaque: no ids or keys in plain sight', async () => {
      const token = await firstToken();
      expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
      expect(token).not.toContain('p02');
    });

    it('rejects a tampered token', async () => {
      const token = await firstToken();
      const [body, mac] = token.split('.') as [string, string];
      const payload = JSON.parse(Buffer.from(body, 'base64url').toString());
      payload.c[payload.c.length - 1] = 'p05'; // skip ahead to another id
      const forged = `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${mac}`;
      const flipped = `${body}.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`;
      for (const pageToken of [forged, flipped, `${body}x.${mac}`]) {
        const error = expectError(
          await list({ pageSize: 2, pageToken }),
          400,
          'INVALID_PAGE_TOKEN',
        );
        expect(error.message).toMatch(/altered or was not issued by this server/);
      }
    });

    it.each(['garbage', 'a.b.c', '.', '%%%'])(
      'rejects the malformed token %s',
      async (pageToken) => {
        expectError(await list({ pageToken }), 400, 'INVALID_PAGE_TOKEN');
      },
    );

    it('rejects a token made for another orderBy or filter', async () => {
      const token = await firstToken({ orderBy: 'projectTitle' });
      for (const params of [
        { orderBy: 'projectTitle-' } as Record<string, string>,
        { orderBy: 'projectTitle', filter: 'category:Art' },
        {},
      ]) {
        const error = expectError(
          await list({ pageSize: 2, ...params, pageToken: token }),
          400,
          'INVALID_PAGE_TOKEN',
        );
        expect(error.message).toMatch(/another query/);
      }
    });

    it('is bound to what the caller may see: a staff token is foreign to a viewer', async () => {
      const token = await firstToken();
      expectError(await list({ pageSize: 2, pageToken: token }, viewer), 400, 'INVALID_PAGE_TOKEN');
      // The same query spelled differently is the same query.
      const filtered = await firstToken({ filter: 'category:Art,category:Interior' });
      const next = await list({
        pageSize: 2,
        filter: 'category:Interior,category:Art',
        pageToken: filtered,
      });
      expect(next.status).toBe(200);
    });

    it('rejects a token issued by another server (another data directory)', async () => {
      const other = await startTestServer();
      try {
        const foreign = (await other.request('GET', q({ pageSize: 1 }))).body.nextPageToken;
        for (let count = 0; count < 2; count++)
          await other.request('POST', '/api/v1/portfolio', { body: portfolioBody() });
        const token = (await other.request('GET', q({ pageSize: 1 }))).body.nextPageToken;
        expect(foreign).toBe('');
        expectError(await list({ pageSize: 1, pageToken: token }), 400, 'INVALID_PAGE_TOKEN');
      } finally {
        await other.close();
      }
    });
  });
});

describe('GET /api/v1/portfolio/{id} field selection', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
    await server.request('POST', '/api/v1/portfolio', {
      body: portfolioBody({ portfolioId: 'd1', aboutProject: 'About it' }),
    });
  });
  afterAll(() => server.close());

  it('answers the whole detail without field', async () => {
    const response = await server.request('GET', '/api/v1/portfolio/d1');
    expect(response.body).toMatchObject({
      portfolioId: 'd1',
      oboutProject: 'About it',
      createdDate: expect.any(Number),
      cover: null,
    });
  });

  it('answers only the selected keys, with the detail spellings', async () => {
    const response = await server.request(
      'GET',
      '/api/v1/portfolio/d1?field=portfolioId,oboutProject,createdDate,cover.fileId,revision',
    );
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      portfolioId: 'd1',
      oboutProject: 'About it',
      createdDate: expect.any(Number),
      cover: null,
      revision: 1,
    });
    expect(response.headers.get('etag')).toBe('"1"');
  });

  it('rejects unknown detail fields naming the valid ones', async () => {
    const body = expectError(
      await server.request('GET', '/api/v1/portfolio/d1?field=aboutProject'),
      400,
      'INVALID_QUERY',
    );
    expect(body.message).toMatch(
      /Unknown field "aboutProject"; valid keys: portfolioId, memberBarcode/,
    );
    expect(body.message).toContain('oboutProject');
    expectError(
      await server.request('GET', '/api/v1/portfolio/d1?colour=red'),
      400,
      'VALIDATION_FAILED',
    );
  });
});
