import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListPageCache } from '../../server/repositories/list-page-cache';
import { fixtures, uploadMultipart } from '../helpers/file-fixtures';
import {
  embeddedOnly,
  portfolioBody,
  startTestServer,
  type TestServer,
} from '../helpers/test-server';

/**
 * The list answers repeated requests from a cache of serialized pages. Whatever it reuses, a
 * reader must see every change the moment it has been answered, and only what their role allows.
 */
describe.each([
  ['with the list cache', undefined],
  ['with the list cache off', 0],
])('list answers after changes (%s)', (_name, listCacheBytes) => {
  let server: TestServer;
  let viewer: string;
  const LIST = '/api/v1/portfolio?orderBy=projectTitle&field=portfolioId,projectTitle,cover.fileId';

  const titles = async (session?: string) => {
    const response = await server.request('GET', LIST, { session });
    expect(response.status).toBe(200);
    return response.body as {
      lists: Array<{ portfolioId: string; projectTitle: string; cover: { fileId: string } | null }>;
      total: number;
    };
  };
  const create = async (projectTitle: string) => {
    const response = await server.request('POST', '/api/v1/portfolio', {
      body: portfolioBody({ projectTitle }),
    });
    expect(response.status).toBe(201);
    return response.body.portfolioId as string;
  };

  beforeAll(async () => {
    server = await startTestServer({ listCacheBytes });
    viewer = await server.userSession('vera', 'viewer');
  });
  afterAll(() => server.close());

  it('shows a created portfolio and a new title on the very next request', async () => {
    const id = await create('Beta');
    expect((await titles()).lists.map((item) => item.projectTitle)).toEqual(['Beta']);
    expect((await titles()).total).toBe(1); // asked again: the same answer

    await create('Alpha');
    expect((await titles()).lists.map((item) => item.projectTitle)).toEqual(['Alpha', 'Beta']);

    const updated = await server.request('PUT', `/api/v1/portfolio/${id}`, {
      body: portfolioBody({ projectTitle: 'Aardvark' }),
    });
    expect(updated.status).toBe(200);
    expect((await titles()).lists.map((item) => item.projectTitle)).toEqual(['Aardvark', 'Alpha']);
  });

  it('answers the same URL by role: a viewer never gets the staff answer', async () => {
    const staff = await titles();
    expect(staff.total).toBe(2);
    expect((await titles(viewer)).total).toBe(0); // nothing is published yet
    expect((await titles()).total).toBe(2);
  });

  it('writes the keys in the documented order, whatever order field names them in', async () => {
    const response = await fetch(
      `${server.url}/api/v1/portfolio?field=revision,cover.fileId,portfolioId&pageSize=1`,
      { headers: { authorization: server.adminSession } },
    );
    expect(await response.text()).toMatch(
      /^\{"lists":\[\{"portfolioId":"[^"]+","cover":(null|\{"fileId":"[^"]+"\}),"revision":\d+\}\],"result":1,/,
    );
  });

  it('shows a new cover right after the upload', async () => {
    const id = (await titles()).lists[0]!.portfolioId;
    expect((await titles()).lists[0]!.cover).toBeNull();
    const uploaded = await uploadMultipart(
      server,
      `/api/v1/portfolio/${id}/cover`,
      await fixtures.png(),
      {
        filename: 'cover.png',
        contentType: 'image/png',
      },
    );
    expect(uploaded.status).toBe(200);
    expect((await titles()).lists[0]!.cover).toEqual({ fileId: uploaded.body.fileId });
  });
});

/**
 * The route keeps no index of its own: every list is the repository's `query`, and an answer is
 * reused only at the repository's `listVersion` (a backend without one is never cached).
 */
describe('list answers through the repository', () => {
  let server: TestServer;
  const LIST = '/api/v1/portfolio?orderBy=projectTitle&field=portfolioId,projectTitle';
  let queries = 0;

  beforeAll(async () => {
    server = await startTestServer();
    const repository = server.app.portfolios;
    const query = repository.query.bind(repository);
    repository.query = (request) => {
      queries++;
      return query(request);
    };
    const created = await server.request('POST', '/api/v1/portfolio', {
      body: portfolioBody({ projectTitle: 'Only' }),
    });
    expect(created.status).toBe(201);
  });
  afterAll(() => server.close());

  const list = async () => {
    const response = await server.request('GET', LIST);
    expect(response.status).toBe(200);
    return (response.body as { lists: Array<{ projectTitle: string }> }).lists;
  };

  // PostgreSQL answers every list with SQL (another instance may have changed anything): no cache.
  embeddedOnly("answers from a cache at the repository's list version, which PostgreSQL has not")(
    "asks the repository, and answers the same URL again from the cache at the repository's version",
    async () => {
      queries = 0;
      expect((await list()).map((item) => item.projectTitle)).toEqual(['Only']);
      expect(queries).toBe(1);
      await list();
      expect(queries).toBe(1);
    },
  );

  it('asks the repository every time when it has no list version', async () => {
    const repository = server.app.portfolios as { listVersion?: () => number };
    const listVersion = repository.listVersion;
    repository.listVersion = undefined;
    try {
      queries = 0;
      await list();
      await list();
      expect(queries).toBe(2);
    } finally {
      repository.listVersion = listVersion;
    }
  });
});

describe('ListPageCache', () => {
  const bytes = (text: string) => Buffer.from(text);

  it('serves an answer only at the version it was built from', () => {
    const cache = new ListPageCache(1_000_000);
    cache.put('staff /a', 3, bytes('{"a":1}'));
    expect(cache.get('staff /a', 3)?.toString()).toBe('{"a":1}');
    expect(cache.get('staff /a', 4)).toBeUndefined();
    expect(cache.get('staff /a', 3)).toBeUndefined(); // dropped when found stale
  });

  it('forgets the least recently used answers past its byte budget', () => {
    const body = bytes('x'.repeat(180)); // key 10 chars * 2 + 180 = 200 bytes an entry
    const cache = new ListPageCache(1000);
    const key = (name: string) => name.padEnd(10);
    for (const name of ['k1', 'k2', 'k3', 'k4', 'k5']) cache.put(key(name), 1, body);
    expect(cache.get(key('k1'), 1)).toBe(body); // k1 is now the most recently used
    cache.put(key('k6'), 1, body);
    expect(cache.get(key('k2'), 1)).toBeUndefined();
    for (const name of ['k1', 'k3', 'k4', 'k5', 'k6']) expect(cache.get(key(name), 1)).toBe(body);
  });

  it('forgets past its entry limit, and never keeps an answer over a quarter of the budget', () => {
    const cache = new ListPageCache(1000, 2);
    cache.put('a', 1, bytes('A'));
    cache.put('b', 1, bytes('B'));
    cache.put('c', 1, bytes('C'));
    expect([cache.get('a', 1), cache.get('b', 1), cache.get('c', 1)].map(String)).toEqual([
      'undefined',
      'B',
      'C',
    ]);
    cache.put('big', 1, bytes('x'.repeat(300)));
    expect(cache.get('big', 1)).toBeUndefined();
    expect(cache.get('c', 1)?.toString()).toBe('C');
  });

  it('keeps nothing with a budget of 0', () => {
    const cache = new ListPageCache(0);
    cache.put('a', 1, bytes('A'));
    expect(cache.get('a', 1)).toBeUndefined();
  });
});
