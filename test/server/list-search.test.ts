import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/error-body';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

/** Portfolios whose words differ in case, accents and prefixes. */
const SEEDS = [
  {
    portfolioId: 's01',
    projectTitle: 'Café Lumière',
    category: 'Interior',
    memberBarcode: 'M100',
    publish: true,
  },
  {
    portfolioId: 's02',
    projectTitle: 'Lake House',
    category: 'Architecture',
    memberBarcode: 'M200',
    generalTag: ['timber'],
    publish: true,
  },
  {
    portfolioId: 's03',
    projectTitle: 'Lakeside cabin',
    category: 'Architecture',
    memberBarcode: 'M300',
    projectDetail: 'A cabin of TIMBER and glass.',
  },
  {
    portfolioId: 's04',
    projectTitle: 'Ring',
    category: 'Jewelry',
    memberBarcode: 'M100',
    aboutProject: 'Made for a wedding at the lake.',
    occasion: ['Wedding'],
    publish: true,
  },
  {
    portfolioId: 's05',
    projectTitle: 'Loft',
    category: 'Interior',
    memberBarcode: 'M400',
    projectDetail: 'Nothing to see.',
    publish: true,
  },
];

describe('GET /api/v1/portfolio?q=', () => {
  let server: TestServer;
  let viewer: string;

  const search = (params: Record<string, string | number>, session?: string) =>
    server.request('GET', `/api/v1/portfolio?${new URLSearchParams(stringify(params))}`, {
      session,
    });
  const ids = async (params: Record<string, string | number>, session?: string) => {
    const response = await search({ field: 'portfolioId', ...params }, session);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.total).toBe(response.body.lists.length);
    return response.body.lists.map((item: { portfolioId: string }) => item.portfolioId);
  };

  beforeAll(async () => {
    server = await startTestServer();
    for (const { publish, ...seed } of SEEDS) {
      const created = await server.request('POST', '/api/v1/portfolio', {
        body: portfolioBody({ projectDetail: 'Plain words.', ...seed }),
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      if (publish) {
        const { portfolioId, ...body } = seed;
        const published = await server.request('PUT', `/api/v1/portfolio/${portfolioId}`, {
          body: portfolioBody({ projectDetail: 'Plain words.', ...body, command: 'publish' }),
        });
        expect(published.status, JSON.stringify(published.body)).toBe(200);
      }
    }
    viewer = await server.userSession('vera', 'viewer');
  });
  afterAll(() => server.close());

  it('ignores case and accents, on both sides', async () => {
    expect(await ids({ q: 'cafe' })).toEqual(['s01']);
    expect(await ids({ q: 'CAFÉ lumiere' })).toEqual(['s01']);
    expect(await ids({ q: 'LUMIÈRE' })).toEqual(['s01']);
  });

  it('matches words by their beginning, not their middle', async () => {
    expect(await ids({ q: 'lum' })).toEqual(['s01']);
    expect(await ids({ q: 'lake', orderBy: 'projectTitle' })).toEqual(['s02', 's03', 's04']);
    expect(await ids({ q: 'ake' })).toEqual([]);
  });

  it('needs every word to match, in any of the searched fields', async () => {
    expect(await ids({ q: 'lake house' })).toEqual(['s02']);
    // "timber": s02's generalTag and s03's projectDetail; "wedding": s04's occasion and about.
    expect(await ids({ q: 'timber' })).toEqual(['s02', 's03']);
    expect(await ids({ q: 'wedding lake' })).toEqual(['s04']);
    expect(await ids({ q: 'm100' })).toEqual(['s01', 's04']);
    expect(await ids({ q: 'lake nothing' })).toEqual([]);
  });

  it('treats punctuation as a space between words', async () => {
    expect(await ids({ q: 'lake,house!' })).toEqual(['s02']);
  });

  it('combines with filter, orderBy and field', async () => {
    expect(await ids({ q: 'lake', filter: 'category:Architecture' })).toEqual(['s02', 's03']);
    expect(await ids({ q: 'lake', orderBy: 'projectTitle-' })).toEqual(['s04', 's03', 's02']);
    const response = await search({ q: 'cafe', field: 'projectTitle' });
    expect(response.body).toEqual({
      lists: [{ projectTitle: 'Café Lumière' }],
      result: 1,
      total: 1,
      nextPageToken: '',
    });
  });

  it('shows viewers only the published, active matches', async () => {
    expect(await ids({ q: 'lake' }, viewer)).toEqual(['s02', 's04']);
  });

  it('pages to the end with tokens, each page counting every match', async () => {
    const seen: string[] = [];
    let pageToken = '';
    do {
      const response = await search({
        q: 'lake',
        orderBy: 'projectTitle-',
        pageSize: 1,
        field: 'portfolioId',
        ...(pageToken ? { pageToken } : {}),
      });
      expect(response.status).toBe(200);
      expect(response.body.total).toBe(3);
      seen.push(...response.body.lists.map((item: { portfolioId: string }) => item.portfolioId));
      pageToken = response.body.nextPageToken;
    } while (pageToken);
    expect(seen).toEqual(['s04', 's03', 's02']);
  });

  it('rejects a page token made for another q', async () => {
    const first = await search({ q: 'lake', pageSize: 1 });
    const token = first.body.nextPageToken as string;
    expect(token).not.toBe('');
    expectError(
      await search({ q: 'timber', pageSize: 1, pageToken: token }),
      400,
      'INVALID_PAGE_TOKEN',
    );
    expectError(await search({ pageSize: 1, pageToken: token }), 400, 'INVALID_PAGE_TOKEN');
  });

  it('orders by relevance only when asked, best match first', async () => {
    // A whole word of the title (s02 "Lake House") before a prefix of one (s03 "Lakeside"),
    // before a word elsewhere (s04's about); equal scores by portfolioId.
    const ranked = await ids({ q: 'lake', orderBy: 'relevance' });
    expect(ranked).toEqual(['s02', 's03', 's04']);
    expect(await ids({ q: 'timber', orderBy: 'relevance' })).toEqual(['s02', 's03']);
    const paged: string[] = [];
    let pageToken = '';
    do {
      const response = await search({
        q: 'lake',
        orderBy: 'relevance',
        pageSize: 1,
        field: 'portfolioId',
        ...(pageToken ? { pageToken } : {}),
      });
      paged.push(...response.body.lists.map((item: { portfolioId: string }) => item.portfolioId));
      pageToken = response.body.nextPageToken;
    } while (pageToken);
    expect(paged).toEqual(ranked);
  });

  it('rejects relevance without q, or beside other keys', async () => {
    const alone = expectError(await search({ orderBy: 'relevance' }), 400, 'INVALID_QUERY');
    expect(alone.message).toMatch(/needs a search/);
    expectError(
      await search({ q: 'lake', orderBy: 'relevance,createdTime' }),
      400,
      'INVALID_QUERY',
    );
  });

  it('rejects a q over 200 characters, or of punctuation only, saying so', async () => {
    const long = expectError(await search({ q: 'a'.repeat(201) }), 400, 'INVALID_QUERY');
    expect(long.message).toMatch(/201 characters.*at most 200/);
    expect(long.details[0]!.field).toBe('querystring.q');
    expect((await search({ q: 'a'.repeat(200) })).status).toBe(200);
    const punctuation = expectError(await search({ q: '?!, -' }), 400, 'INVALID_QUERY');
    expect(punctuation.message).toMatch(/no letters or digits/);
  });

  // Deletes are covered by test/server/list-index-properties.test.ts (through the store).
  it('keeps up with creates and updates', async () => {
    const created = await server.request('POST', '/api/v1/portfolio', {
      body: portfolioBody({ portfolioId: 's06', projectTitle: 'Ærø pavilion' }),
    });
    expect(created.status).toBe(201);
    expect(await ids({ q: 'pavil' })).toEqual(['s06']);
    expect(await ids({ q: 'garden' })).toEqual([]); // asked before the update that matches it
    const updated = await server.request('PUT', '/api/v1/portfolio/s06', {
      body: portfolioBody({ projectTitle: 'Garden shed' }),
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(await ids({ q: 'pavil' })).toEqual([]);
    expect(await ids({ q: 'garden' })).toEqual(['s06']);
    expect(await ids({ q: 'garden shed' })).toEqual(['s06']);
    expect(await ids({ q: 'aero' })).toEqual([]);
  });
});

function stringify(params: Record<string, string | number>): Record<string, string> {
  return Object.fromEntries(Object.entries(params).map(([key, value]) => [key, String(value)]));
}
