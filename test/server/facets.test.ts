import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/error-body';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

interface Seed {
  portfolioId: string;
  category: string;
  generalTag?: string[];
  occasion?: string[];
  readyToBuy?: string;
  certificateByOrg?: string[];
  publish?: boolean;
}

const SEEDS: Seed[] = [
  { portfolioId: 'f1', category: 'Art', generalTag: ['oak', 'oak', 'glass'], publish: true },
  { portfolioId: 'f2', category: 'art', generalTag: ['oak'], readyToBuy: 'yes', publish: true },
  { portfolioId: 'f3', category: 'ART', occasion: ['Wedding'], certificateByOrg: ['Gold'] },
  { portfolioId: 'f4', category: 'Interior', occasion: ['Wedding', 'Birthday'], publish: true },
  { portfolioId: 'f5', category: 'Interior', readyToBuy: 'yes', certificateByOrg: ['Gold'] },
];

type Facets = Record<string, Array<{ value: string; count: number }>>;

const path = (params: Record<string, string>) =>
  '/api/v1/portfolio/facets?' + new URLSearchParams(params).toString();

/** Creates the portfolio, then sets what only an admin sets and publishes it if asked. */
async function write(server: TestServer, seed: Seed, command: 'save' | 'publish' = 'save') {
  const { portfolioId, publish, certificateByOrg = [], ...editable } = seed;
  const body = portfolioBody(editable);
  const created = await server.request('POST', '/api/v1/portfolio', {
    body: { ...body, portfolioId },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const updated = await server.request('PUT', `/api/v1/portfolio/${portfolioId}`, {
    body: { ...body, certificateByOrg, command: publish ? 'publish' : command },
  });
  expect(updated.status, JSON.stringify(updated.body)).toBe(200);
}

describe('GET /api/v1/portfolio/facets', () => {
  let server: TestServer;
  let viewer: string;
  const facets = async (params: Record<string, string>, session?: string): Promise<Facets> => {
    const response = await server.request('GET', path(params), { session });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return (response.body as { facets: Facets }).facets;
  };
  const total = async (filter: string, session?: string) => {
    const response = await server.request(
      'GET',
      `/api/v1/portfolio?pageSize=1&filter=${encodeURIComponent(filter)}`,
      { session },
    );
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return (response.body as { total: number }).total;
  };

  beforeAll(async () => {
    server = await startTestServer();
    for (const seed of SEEDS) await write(server, seed);
    viewer = await server.userSession('vera', 'viewer');
  });
  afterAll(() => server.close());

  it('counts each value among every portfolio for staff: a category whatever its case, most used first', async () => {
    expect(await facets({})).toEqual({
      category: [
        { value: 'ART', count: 3 },
        { value: 'Interior', count: 2 },
      ],
      generalTag: [
        { value: 'oak', count: 2 },
        { value: 'glass', count: 1 },
      ],
      occasion: [
        { value: 'Wedding', count: 2 },
        { value: 'Birthday', count: 1 },
      ],
      readyToBuy: [{ value: 'yes', count: 2 }],
      certificateByOrg: [{ value: 'Gold', count: 2 }],
    });
  });

  it('counts only published, active portfolios for a viewer, and only the keys asked for', async () => {
    expect(await facets({ keys: 'certificateByOrg,category' }, viewer)).toEqual({
      category: [
        { value: 'Art', count: 2 },
        { value: 'Interior', count: 1 },
      ],
      certificateByOrg: [],
    });
  });

  it('counts the matches of filter and q, as the list matches them', async () => {
    expect(await facets({ keys: 'generalTag,readyToBuy', filter: 'category:aRt' })).toEqual({
      generalTag: [
        { value: 'oak', count: 2 },
        { value: 'glass', count: 1 },
      ],
      readyToBuy: [{ value: 'yes', count: 1 }],
    });
    expect(await facets({ keys: 'occasion', q: 'lake', filter: 'readyToBuy:yes' })).toEqual({
      occasion: [],
    });
  });

  it('agrees with the list’s totals for every value, role and filter', async () => {
    for (const session of [undefined, viewer]) {
      for (const filter of ['', 'readyToBuy:yes']) {
        const all = await facets({ keys: 'category,readyToBuy,certificateByOrg', filter }, session);
        for (const [key, values] of Object.entries(all))
          for (const { value, count } of values) {
            const narrowed = filter ? `${filter},${key}:${value}` : `${key}:${value}`;
            expect(await total(narrowed, session), narrowed).toBe(count);
          }
      }
    }
  });

  it('refuses an unknown key in plain words, naming the keys that can be counted', async () => {
    const body = expectError(
      await server.request('GET', path({ keys: 'category,colour' })),
      400,
      'INVALID_QUERY',
    );
    expect(body.message).toBe(
      '"colour" cannot be counted; the keys that can be counted are category, generalTag, occasion, readyToBuy, certificateByOrg.',
    );
    expect(body.details[0]!.field).toBe('querystring.keys');
    // A viewer may not filter by what only staff filter on, here as on the list.
    expectError(
      await server.request('GET', path({ filter: 'published:false' }), { session: viewer }),
      400,
      'INVALID_QUERY',
    );
  });

  it('needs a session', async () => {
    const response = await server.request('GET', path({}), { session: null });
    expect(response.status).toBe(401);
  });
});

/** What the service holds, as the model sees it. */
interface ModelPortfolio {
  category: string;
  generalTag: string[];
  readyToBuy: string;
  published: boolean;
}

const CATEGORIES = ['Art', 'art', 'Wood'];
const TAGS = ['oak', 'glass', 'Oak'];

/** The naive count: every portfolio looked at, each distinct value counted once. */
function naive(
  model: Map<string, ModelPortfolio>,
  visibleOnly: boolean,
  matches: (portfolio: ModelPortfolio) => boolean = () => true,
): Facets {
  const count = (values: (p: ModelPortfolio) => string[], fold: boolean) => {
    const spellings = new Map<string, Map<string, number>>();
    for (const portfolio of model.values()) {
      if ((visibleOnly && !portfolio.published) || !matches(portfolio)) continue;
      for (const value of new Set(values(portfolio))) {
        if (value === '') continue;
        const key = fold ? value.toLowerCase() : value;
        const group = spellings.get(key) ?? new Map<string, number>();
        group.set(value, (group.get(value) ?? 0) + 1);
        spellings.set(key, group);
      }
    }
    return [...spellings.values()]
      .map((group) => {
        const [shown] = [...group].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]!;
        return { value: shown, count: [...group.values()].reduce((a, b) => a + b, 0) };
      })
      .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : 1));
  };
  return {
    category: count((p) => [p.category], true),
    generalTag: count((p) => p.generalTag, false),
    readyToBuy: count((p) => [p.readyToBuy], false),
  };
}

describe('facets against a naive count, across random writes', () => {
  let server: TestServer;
  let viewer: string;
  let editor: string;
  let run = 0;
  beforeAll(async () => {
    server = await startTestServer();
    viewer = await server.userSession('vic', 'viewer');
    editor = await server.userSession('eddie', 'editor', ['*']);
  });
  afterAll(() => server.close());

  const arbitraryPortfolio = fc.record({
    category: fc.constantFrom(...CATEGORIES),
    generalTag: fc.array(fc.constantFrom(...TAGS), { maxLength: 3 }),
    readyToBuy: fc.constantFrom('', 'yes', 'no'),
  });
  type Fields = { category: string; generalTag: string[]; readyToBuy: string };
  const command = fc.oneof(
    fc.record({ op: fc.constant('create' as const), fields: arbitraryPortfolio }),
    fc.record({ op: fc.constant('update' as const), at: fc.nat(), fields: arbitraryPortfolio }),
    fc.record({ op: fc.constant('publish' as const), at: fc.nat() }),
    fc.record({ op: fc.constant('delete' as const), at: fc.nat() }),
  );

  it('answers the naive counts for staff and viewers after every write', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 12 }), async (commands) => {
        run++;
        // Each run starts from an empty library (a failed run, being shrunk, leaves its own).
        const live = await server.request('GET', '/api/v1/portfolio?pageSize=1000');
        for (const { portfolioId } of live.body.lists as Array<{ portfolioId: string }>)
          await server.request('DELETE', `/api/v1/portfolio/${portfolioId}`);
        const model = new Map<string, ModelPortfolio>();
        const body = (fields: Fields) => portfolioBody({ memberBarcode: 'M9', ...fields });
        const pick = (at: number) => [...model.keys()][at % Math.max(model.size, 1)];
        for (const [step, c] of commands.entries()) {
          if (c.op === 'create') {
            const portfolioId = `r${run}s${step}`;
            const created = await server.request('POST', '/api/v1/portfolio', {
              body: { ...body(c.fields), portfolioId },
              session: editor,
            });
            expect(created.status).toBe(201);
            model.set(portfolioId, { ...c.fields, published: false });
            continue;
          }
          const id = pick(c.at);
          if (id === undefined) continue;
          const current = model.get(id)!;
          if (c.op === 'delete') {
            const deleted = await server.request('DELETE', `/api/v1/portfolio/${id}`);
            expect(deleted.status).toBe(204);
            model.delete(id);
            continue;
          }
          const { published, ...kept } = current;
          const fields = c.op === 'update' ? c.fields : kept;
          const updated = await server.request('PUT', `/api/v1/portfolio/${id}`, {
            body: { ...body(fields), command: c.op === 'publish' ? 'publish' : 'save' },
          });
          expect(updated.status, JSON.stringify(updated.body)).toBe(200);
          model.set(id, { ...fields, published: published || c.op === 'publish' });
        }
        const keys = 'category,generalTag,readyToBuy';
        for (const [session, visibleOnly] of [
          [undefined, false],
          [editor, false],
          [viewer, true],
        ] as const) {
          const response = await server.request('GET', path({ keys }), { session });
          expect(response.body.facets).toEqual(naive(model, visibleOnly));
          // A filter's counts: counted on its first request, then kept in step with the writes.
          const filtered = await server.request(
            'GET',
            path({ keys, filter: 'category:ART,readyToBuy:yes' }),
            { session },
          );
          expect(filtered.body.facets).toEqual(
            naive(
              model,
              visibleOnly,
              (p) => p.category.toLowerCase() === 'art' && p.readyToBuy === 'yes',
            ),
          );
        }
      }),
      { numRuns: 15 },
    );
  });
});
