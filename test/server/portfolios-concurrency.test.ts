import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/error-body';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

describe('compare-and-set over HTTP (DESIGN §9: no lost update)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  async function create(): Promise<string> {
    const created = await s.request('POST', '/api/v1/portfolio', { body: portfolioBody() });
    return created.body.portfolioId;
  }

  it('50 concurrent conditional updates from one base: exactly one 200, 49 409', async () => {
    const id = await create();
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        s.request('PUT', `/api/v1/portfolio/${id}`, {
          body: portfolioBody({ projectTitle: `Writer ${index}`, revision: 1 }),
        }),
      ),
    );
    const winners = responses.filter((response) => response.status === 200);
    expect(winners).toHaveLength(1);
    for (const response of responses.filter((response) => response.status !== 200))
      expectError(response, 409, 'REVISION_CONFLICT');
    const detail = (await s.request('GET', `/api/v1/portfolio/${id}`)).body;
    expect(detail.revision).toBe(2);
    expect(detail.projectTitle).toBe(winners[0]!.body.projectTitle);
    const history = await s.request('GET', `/api/v1/portfolio/${id}/revisions`);
    expect(history.body.total).toBe(2);
  });

  it('the same through If-Match, mixed with deletes: one change wins, the rest 409', async () => {
    const id = await create();
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        index % 2 === 0
          ? s.request('PUT', `/api/v1/portfolio/${id}`, {
              body: portfolioBody({ projectTitle: `Writer ${index}` }),
              headers: { 'if-match': '"1"' },
            })
          : s.request('DELETE', `/api/v1/portfolio/${id}`, { headers: { 'if-match': '"1"' } }),
      ),
    );
    const won = responses.filter((response) => response.status < 300);
    expect(won).toHaveLength(1);
    // After a winning delete the portfolio is gone: 404 for those that came later, 409 before.
    const lost = won[0]!.status === 204 ? [404, 409] : [409];
    for (const response of responses.filter((response) => response.status >= 300))
      expect(lost).toContain(response.status);
  });

  it('unconditional updates all apply, one after another: none is lost', async () => {
    const id = await create();
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        s.request('PUT', `/api/v1/portfolio/${id}`, {
          body: portfolioBody({ projectTitle: `Writer ${index}` }),
        }),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual(Array(20).fill(200));
    const revisions = responses.map((response) => response.body.revision).sort((a, b) => a - b);
    expect(revisions).toEqual(Array.from({ length: 20 }, (_, index) => index + 2));
    expect((await s.request('GET', `/api/v1/portfolio/${id}`)).body.revision).toBe(21);
  });
});
