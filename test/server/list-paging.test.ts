import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

const CATEGORIES = ['C0', 'C1', 'C2', 'C3'];
const TITLES = ['alpha', 'Beta', 'gamma', 'delta', 'Alpha'];

function seedBody(index: number, prefix: string) {
  return {
    ...portfolioBody(),
    portfolioId: `${prefix}${String(index).padStart(4, '0')}`,
    category: CATEGORIES[index % CATEGORIES.length]!,
    memberBarcode: `M${index % 9}`,
    // Few distinct titles: long runs of ties, where only portfolioId orders.
    projectTitle: TITLES[(index * 7) % TITLES.length]!,
  };
}

describe('paging while others write', () => {
  let server: TestServer;
  let nextIndex = 0;
  const initial: Array<ReturnType<typeof seedBody>> = [];

  beforeAll(async () => {
    server = await startTestServer();
    for (let start = 0; start < 300; start += 25) {
      const batch = Array.from({ length: 25 }, (_, offset) => seedBody(start + offset, 'a'));
      const created = await Promise.all(
        batch.map((body) => server.request('POST', '/api/v1/portfolio', { body })),
      );
      for (const response of created) expect(response.status).toBe(201);
      initial.push(...batch);
    }
  });
  afterAll(() => server.close());

  /** Creates and updates (never touching the sort and filter keys) until `stop` resolves. */
  async function writeUntil(stop: Promise<void>): Promise<number> {
    let done = false;
    void stop.then(() => (done = true));
    let writes = 0;
    const writer = async (lane: number) => {
      while (!done) {
        const index = lane * 100_000 + nextIndex++;
        const created = await server.request('POST', '/api/v1/portfolio', {
          body: seedBody(index, 'z'),
        });
        expect(created.status).toBe(201);
        const target = initial[(index * 13) % initial.length]!;
        const updated = await server.request('PUT', `/api/v1/portfolio/${target.portfolioId}`, {
          body: {
            ...seedBody(Number(target.portfolioId.slice(1)), 'a'),
            portfolioId: undefined,
            projectDetail: `edit ${index}`,
          },
        });
        expect(updated.status, JSON.stringify(updated.body)).toBe(200);
        writes += 2;
      }
    };
    await Promise.all([0, 1, 2].map(writer));
    return writes;
  }

  async function walk(params: Record<string, string>, pageSize: number) {
    const seen: string[] = [];
    let token = '';
    do {
      const query = new URLSearchParams({
        ...params,
        pageSize: String(pageSize),
        field: 'portfolioId',
      });
      if (token) query.set('pageToken', token);
      const response = await server.request('GET', `/api/v1/portfolio?${query}`);
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      seen.push(...response.body.lists.map((item: { portfolioId: string }) => item.portfolioId));
      token = response.body.nextPageToken;
      // Let writers run between pages.
      await new Promise((resolve) => setTimeout(resolve, 2));
    } while (token);
    return seen;
  }

  it.each([
    [{ orderBy: 'createdTime' }, () => true],
    [{ orderBy: 'createdTime-' }, () => true],
    [{ orderBy: 'projectTitle' }, () => true],
    [{ orderBy: 'category-,projectTitle' }, () => true],
    [
      { orderBy: 'projectTitle-', filter: 'category:C1' },
      (p: { category: string }) => p.category === 'C1',
    ],
    [
      { orderBy: 'staffPick-,projectTitle', filter: 'memberBarcode:M3' },
      (p: { memberBarcode: string }) => p.memberBarcode === 'M3',
    ],
  ] as const)(
    'never skips or repeats a portfolio that existed throughout (%o)',
    async (params, matches) => {
      let stopWriters!: () => void;
      const writing = writeUntil(new Promise<void>((resolve) => (stopWriters = resolve)));
      const seen = await walk(params as Record<string, string>, 7);
      stopWriters();
      const writes = await writing;
      expect(writes).toBeGreaterThan(0);

      expect(new Set(seen).size).toBe(seen.length); // no repeats, new portfolios included
      const expected = initial
        .filter((p) => (matches as (p: unknown) => boolean)(p))
        .map((p) => p.portfolioId);
      const seenSet = new Set(seen);
      expect(expected.filter((id) => !seenSet.has(id))).toEqual([]); // no skips
    },
  );

  it('keeps a token valid across a restart on the same data directory', async () => {
    const first = await server.request(
      'GET',
      '/api/v1/portfolio?pageSize=5&orderBy=projectTitle&field=portfolioId',
    );
    const token = first.body.nextPageToken as string;
    const expectedNext = await server.request(
      'GET',
      `/api/v1/portfolio?pageSize=5&orderBy=projectTitle&field=portfolioId&pageToken=${token}`,
    );
    await server.stop();
    server = await startTestServer({ dataDir: server.dataDir });
    const after = await server.request(
      'GET',
      `/api/v1/portfolio?pageSize=5&orderBy=projectTitle&field=portfolioId&pageToken=${token}`,
    );
    expect(after.status).toBe(200);
    expect(after.body.lists).toEqual(expectedNext.body.lists);
  });
});
