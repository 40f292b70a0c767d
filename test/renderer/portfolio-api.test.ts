import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type * as PortfolioApiModule from '../../renderer/src/api/portfolio-api';
import { fixtures, uploadMultipart } from '../helpers/file-fixtures';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

type PortfolioApi = typeof PortfolioApiModule;

/** The renderer's requests, sent to a real server: what it asked and what came back. */
interface Exchange {
  url: URL;
  status: number;
  text: string;
}

describe('the renderer never asks for file data', () => {
  let server: TestServer;
  let id: string;
  const exchanges: Exchange[] = [];
  const realFetch = globalThis.fetch;
  let api: PortfolioApi;

  beforeAll(async () => {
    server = await startTestServer();
    id = (await server.request('POST', '/api/v1/portfolio', { body: portfolioBody() })).body
      .portfolioId;
    const base = `/api/v1/portfolio/${id}`;
    await uploadMultipart(server, `${base}/cover`, await fixtures.jpeg(), { filename: 'c.jpg' });
    await uploadMultipart(server, `${base}/draftingProcess`, fixtures.pdf(), { filename: 'd.pdf' });
    await uploadMultipart(server, `${base}/additionalDocument`, fixtures.csv(), {
      filename: 'a.csv',
    });
    // The renderer resolves paths against its page's origin (the server's), read when the client
    // module loads: set it first.
    Object.defineProperty(globalThis, 'location', {
      value: { origin: server.url },
      configurable: true,
    });
    const client = await import('../../renderer/src/api/api-client');
    api = await import('../../renderer/src/api/portfolio-api');
    client.configureApi({ getSessionId: () => server.adminSession, onUnauthorized: () => {} });
    globalThis.fetch = async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input), server.url);
      const response = await realFetch(input instanceof Request ? input : url, init);
      const text = await response.clone().text();
      exchanges.push({ url, status: response.status, text });
      return response;
    };
  });
  afterEach(() => {
    exchanges.length = 0;
  });
  afterAll(async () => {
    globalThis.fetch = realFetch;
    Reflect.deleteProperty(globalThis, 'location');
    await server.close();
  });

  const expectNoData = () => {
    expect(exchanges.length).toBeGreaterThan(0);
    for (const { url, status, text } of exchanges) {
      expect(status, url.href).toBe(200);
      expect(url.searchParams.get('field'), url.href).toBeTruthy();
      expect(url.searchParams.get('field')!.split(','), url.href).not.toContainEqual(
        expect.stringMatching(/(^|\.)data$|^(cover|draftingProcess|additionalDocument)$/),
      );
      expect(text, url.href).not.toContain('"data"');
    }
  };

  it('loads the detail (detail and edit pages) with every file but none of their bytes', async () => {
    const detail = await api.getPortfolio(id);
    expectNoData();
    expect(detail.projectTitle).toBe(portfolioBody().projectTitle);
    expect(detail.cover).toMatchObject({ originalFilename: 'c.jpg', mimeType: 'image/jpeg' });
    expect(detail.cover!.fileId).toBeTruthy();
    expect(detail.draftingProcess).toEqual([
      expect.objectContaining({ originalFilename: 'd.pdf', mimeType: 'application/pdf' }),
    ]);
    expect(detail.draftingProcess[0]!.fileID).toBeTruthy();
    expect(detail.additionalDocument).toEqual([
      expect.objectContaining({ originalFilename: 'a.csv', mimeType: 'text/csv' }),
    ]);
    // Every other key of the detail is there, as the pages expect it.
    const full = await server.request('GET', `/api/v1/portfolio/${id}`);
    expect(Object.keys(detail).sort()).toEqual(Object.keys(full.body).sort());
    expect(api.DETAIL_FIELDS_WITHOUT_DATA.join(',').length).toBeLessThanOrEqual(2000);
  });

  it('loads gallery pages without cover bytes', async () => {
    const page = await api.listPortfolios({ pageSize: 10 });
    expectNoData();
    expect(page.lists.find((item) => item.portfolioId === id)?.cover).toBeTruthy();
  });
});
