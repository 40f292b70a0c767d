import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

describe('test server helper', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('creates and reads back a portfolio over real HTTP', async () => {
    const created = await server.request('POST', '/api/v1/portfolio', { body: portfolioBody() });
    expect(created.status).toBe(201);
    const detail = await server.request('GET', `/api/v1/portfolio/${created.body.portfolioId}`);
    expect(detail.status).toBe(200);
    expect(detail.body.projectTitle).toBe('Lake house');
  });
});
