import { readFile } from 'node:fs/promises';
import { Type } from '@sinclair/typebox';
import Fastify from 'fastify';
import type { OpenAPI3, OperationObject } from 'openapi-typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import apiDocs from '../../server/plugins/api-docs';
import { OpenApiAnswers } from '../helpers/openapi-answers';
import { CLIENT_TYPES_PATH, clientTypes, openApiDocument } from '../../scripts/openapi-document';

let document: OpenAPI3;

beforeAll(async () => {
  document = await openApiDocument();
}, 60_000);

function operations(): Array<[string, string, OperationObject]> {
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item as Record<string, OperationObject>).map(
      ([method, operation]) => [method, path, operation] as [string, string, OperationObject],
    ),
  );
}

function operation(method: string, path: string): OperationObject {
  const found = (document.paths?.[path] as Record<string, OperationObject> | undefined)?.[method];
  if (!found) throw new Error(`${method} ${path} is not documented`);
  return found;
}

describe('the OpenAPI document', () => {
  it('matches the committed client types (run npm run api:generate after a schema change)', async () => {
    const committed = await readFile(CLIENT_TYPES_PATH, 'utf8');
    expect(await clientTypes(document)).toBe(committed);
  }, 60_000);

  it('names the shared schemas once, as components, and refers to them', () => {
    const schemas = document.components?.schemas ?? {};
    for (const name of ['ErrorBody', 'PortfolioDetail', 'CoverFile', 'ListFile', 'User', 'Session'])
      expect(schemas).toHaveProperty(name);
    // The error body's own keys appear only in its component, never inline in an operation.
    expect(JSON.stringify(document.paths)).not.toContain('"statusCode"');
    const detail = schemas.PortfolioDetail as { required: string[]; properties: object };
    expect(detail.required.sort()).toEqual(Object.keys(detail.properties).sort());
  });

  it('gives every operation a unique operationId, and HEAD where GET is served', () => {
    const ids = operations().map(([, , op]) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(operation('head', '/api/v1/portfolio/{portfolioId}/files/{fileId}').operationId).toBe(
      'downloadFileHead',
    );
  });

  it('describes downloads and thumbnails as bytes with their statuses and headers', () => {
    const download = operation('get', '/api/v1/portfolio/{portfolioId}/files/{fileId}');
    expect(Object.keys(download.responses ?? {})).toEqual(
      expect.arrayContaining(['200', '206', '304', '404', '416']),
    );
    const ok = download.responses?.['200'] as { headers: object; content: object };
    expect(Object.keys(ok.headers)).toEqual(
      expect.arrayContaining(['ETag', 'Content-Disposition']),
    );
    expect(ok.content).toEqual({ '*/*': { schema: { type: 'string', format: 'binary' } } });
    const parameters = (download.parameters ?? []) as Array<{ in: string; name: string }>;
    expect(parameters.filter((p) => p.in === 'header').map((p) => p.name)).toEqual([
      'if-none-match',
      'range',
      'if-range',
    ]);
    const thumbnail = operation('get', '/api/v1/portfolio/{portfolioId}/files/{fileId}/thumbnail');
    expect(Object.keys(thumbnail.responses ?? {})).toEqual(
      expect.arrayContaining(['200', '304', '415']),
    );
  });

  it('lists the codes of each error answer, and 415 and 413 on JSON routes', () => {
    const update = operation('put', '/api/v1/portfolio/{portfolioId}');
    expect(update.responses?.['409']).toMatchObject({
      content: {
        'application/json': {
          schema: {
            allOf: [
              { $ref: '#/components/schemas/ErrorBody' },
              { properties: { code: { type: 'string', enum: ['REVISION_CONFLICT'] } } },
            ],
          },
        },
      },
    });
    expect(Object.keys(update.responses ?? {})).toEqual(
      expect.arrayContaining(['200', '400', '401', '403', '404', '409', '413', '415', '500']),
    );
    const signIn = operation('post', '/api/v1/appauth');
    expect(signIn.security).toEqual([]);
    expect(Object.keys((signIn.responses?.['429'] as { headers: object }).headers)).toEqual([
      'Retry-After',
    ]);
  });

  it('calls a body optional only when its schema requires nothing', () => {
    const required = (method: string, path: string) =>
      (operation(method, path).requestBody as { required: boolean }).required;
    expect(required('post', '/api/v1/trash/{portfolioId}/restore')).toBe(false);
    expect(required('post', '/api/v1/portfolio')).toBe(true);
    expect(required('put', '/api/v1/users/{username}')).toBe(true); // minProperties: 1
  });

  it('has servers and a license', () => {
    expect(document.servers?.length).toBeGreaterThan(0);
    expect(document.info.license?.name).toBeTruthy();
  });
});

describe('building the document', () => {
  async function appWith(register: (app: ReturnType<typeof Fastify>) => void) {
    const app = Fastify();
    await app.register(apiDocs, { version: '0.0.0' });
    register(app);
    await app.ready();
    return app;
  }

  it('refuses a route without an operationId when it is registered', async () => {
    await expect(
      appWith((app) => app.get('/api/v1/nameless', { schema: {} }, async () => ({}))),
    ).rejects.toThrow('GET /api/v1/nameless has no operationId');
  });

  it('refuses two different schemas under one name', async () => {
    const app = await appWith((app) => {
      const one = Type.Object({ a: Type.String() }, { $id: 'Thing' });
      const other = Type.Object({ b: Type.String() }, { $id: 'Thing' });
      app.get('/one', { schema: { operationId: 'one', response: { 200: one } } }, async () => ({}));
      app.get('/other', { schema: { operationId: 'other', response: { 200: other } } }, () => ({}));
    });
    expect(() => app.swagger()).toThrow('Two different schemas are named "Thing"');
    await app.close();
  });
});

describe('checking answers against the document (as every HTTP test does)', () => {
  const error = (statusCode: number, code: string) => ({
    result: 'error',
    statusCode,
    error: 'Error',
    code,
    message: 'm',
    details: [],
  });
  const check = (method: string, url: string, status: number, body: unknown) =>
    new OpenApiAnswers(document as never).check(method, url, status, 'application/json', body);

  it('accepts documented answers', () => {
    check('GET', '/api/v1/portfolio/p1', 404, error(404, 'PORTFOLIO_NOT_FOUND'));
    check('GET', '/api/v1/nowhere', 404, error(404, 'ROUTE_NOT_FOUND'));
  });

  it('refuses an undocumented status, an unlisted code and a body that does not match', () => {
    expect(() => check('GET', '/api/v1/users', 409, error(409, 'LAST_ADMIN'))).toThrow(
      'the status is not documented',
    );
    expect(() => check('GET', '/api/v1/portfolio/p1', 404, error(404, 'USER_NOT_FOUND'))).toThrow(
      'the body does not match',
    );
    expect(() => check('GET', '/api/v1/users', 200, { lists: [{ username: 'a' }] })).toThrow(
      'the body does not match',
    );
    expect(() => check('PATCH', '/api/v1/users', 404, error(404, 'USER_NOT_FOUND'))).toThrow(
      'the operation is not documented',
    );
  });
});
