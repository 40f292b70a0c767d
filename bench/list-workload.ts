/**
 * The list requests of a team at work (issue 14): every URL new, filters on category,
 * memberBarcode and staffPick, four orders, page sizes 20–100, three small fields; the same mixed
 * with 5 % updates; and full-text searches. Deterministic: every run sends the same sequence.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import autocannon, { type Instance, type RequestParams, type Result } from 'autocannon';
import type { PortfolioRecord } from '../shared';
import { listScope, parseFilter, parseOrderBy, parseSearch } from '../server/domain/list-query';
import type { ListRequest } from '../server/repositories/portfolio-repository-contract';
import { CATEGORIES, random, WORDS } from './seed';
import { timed } from './server-process';

export const ORDERS = ['createdTime', 'projectTitle-', 'modifiedTime-', 'category,projectTitle'];
const SMALL_FIELDS = ['portfolioId', 'projectTitle', 'createdTime', 'category', 'memberBarcode'];
export const CACHED_LIST_PATH =
  '/api/v1/portfolio?filter=category:Interior&orderBy=createdTime-&field=portfolioId,projectTitle,createdTime&pageSize=100';

export interface Request {
  method: 'GET' | 'PUT';
  path: string;
  body?: string;
}

export function listWorkload(records: readonly PortfolioRecord[], seed = 7) {
  const next = random(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const record = () => pick(records);
  const fields = () => {
    const chosen = new Set<string>(['portfolioId']);
    while (chosen.size < 3) chosen.add(pick(SMALL_FIELDS));
    return [...chosen].join(',');
  };
  const filter = (): string => {
    const roll = next();
    if (roll < 0.4) return `category:${pick(CATEGORIES)}`;
    if (roll < 0.65) return `memberBarcode:${record().memberBarcode}`;
    if (roll < 0.8) return `staffPick:${next() < 0.5}`;
    return `category:${pick(CATEGORIES)},staffPick:${next() < 0.5}`;
  };
  const page = () => 20 + Math.floor(next() * 81);
  const path = (params: Record<string, string>) =>
    `/api/v1/portfolio?${new URLSearchParams(params)}`;
  /** A word, or its first 2–5 letters, sometimes with a second one. */
  const words = () => {
    const word = () => {
      const whole = pick(WORDS);
      return next() < 0.5 ? whole : whole.slice(0, 2 + Math.floor(next() * 4));
    };
    return next() < 0.3 ? `${word()} ${word()}` : word();
  };

  const list = (): Request => ({
    method: 'GET',
    path: path({
      filter: filter(),
      orderBy: pick(ORDERS),
      pageSize: String(page()),
      field: fields(),
    }),
  });
  const update = (): Request => {
    const target = record();
    return {
      method: 'PUT',
      path: `/api/v1/portfolio/${target.portfolioId}`,
      // A new title and modifiedTime: the update moves the portfolio in two of the orders.
      body: JSON.stringify({
        memberBarcode: target.memberBarcode,
        category: target.category,
        projectTitle: `${pick(WORDS)} ${pick(WORDS)} edited ${Math.floor(next() * 1e6)}`,
        projectDetail: target.projectDetail,
      }),
    };
  };
  const search = (): Request => {
    const params: Record<string, string> = {
      q: words(),
      orderBy: pick(ORDERS),
      pageSize: String(page()),
      field: fields(),
    };
    if (next() < 0.5) params.filter = filter();
    return { method: 'GET', path: path(params) };
  };
  /** The facets a gallery asks for: half of the whole library, half of a filter's matches. */
  const facets = (): Request => {
    const params: Record<string, string> = { keys: 'category,generalTag,readyToBuy' };
    if (next() < 0.5) params.filter = filter();
    return { method: 'GET', path: `/api/v1/portfolio/facets?${new URLSearchParams(params)}` };
  };
  return { list, update, search, facets, mixed: () => (next() < 0.05 ? update() : list()) };
}

/** The kinds of request a workload makes (see listWorkload). */
export type WorkloadKind = 'list' | 'search' | 'mixed' | 'facets';

/**
 * One autocannon run of a kind of the workload, its sequence drawn from `seed`, against a server
 * signed in as `session`: what the before/after scripts measure in turns.
 */
export function runWorkload(
  server: { url: string; session: string },
  records: readonly PortfolioRecord[],
  options: { kind: WorkloadKind; seed: number; seconds: number; connections: number },
): Promise<Result> {
  const workload = listWorkload(records, options.seed);
  return autocannon({
    url: server.url,
    connections: options.connections,
    duration: options.seconds,
    headers: { authorization: server.session },
    requests: sendEach(workload[options.kind]),
  });
}

/**
 * Every order with every category and staffPick value, one small page each: the large trees the
 * workload needs, built before it is measured, so that no measured request pays for a build.
 */
export async function buildEveryTree(url: string, headers: Record<string, string>): Promise<void> {
  for (const orderBy of ORDERS)
    for (const filter of [
      ...CATEGORIES.map((category) => `category:${category}`),
      'staffPick:true',
      'staffPick:false',
    ])
      await timed(url, headers, {
        method: 'GET',
        path: `/api/v1/portfolio?${new URLSearchParams({ filter, orderBy, pageSize: '1', field: 'portfolioId' })}`,
      });
}

/**
 * `count` list URLs of the workload (a sequence of their own), each answered once by the server
 * at `url` and written to `dir`/list-answers.json as [path, body] pairs, the file
 * bench/replay-server.ts serves.
 */
export async function recordListAnswers(
  url: string,
  headers: Record<string, string>,
  records: readonly PortfolioRecord[],
  dir: string,
  count = 400,
): Promise<{ requests: Request[]; file: string; meanBodyBytes: number }> {
  const pool = listWorkload(records, 42);
  const requests = Array.from({ length: count }, () => pool.list());
  const pairs: [string, string][] = [];
  for (let start = 0; start < requests.length; start += 4)
    await Promise.all(
      requests.slice(start, start + 4).map(async (request) => {
        const response = await fetch(url + request.path, { headers });
        const body = await response.text();
        if (!response.ok) throw new Error(`${request.path}: ${response.status} ${body}`);
        pairs.push([request.path, body]);
      }),
    );
  const file = join(dir, 'list-answers.json');
  await writeFile(file, JSON.stringify(pairs));
  const bytes = pairs.reduce((sum, [, body]) => sum + Buffer.byteLength(body), 0);
  return { requests, file, meanBodyBytes: Math.round(bytes / pairs.length) };
}

/** autocannon's `requests` for a workload: every send is the next request `next` makes. */
export function sendEach(next: () => { method: string; path: string; body?: string }) {
  return [
    {
      setupRequest: (request: RequestParams): RequestParams => {
        const { method, path, body } = next();
        const headers = { ...request.headers };
        if (body) headers['content-type'] = 'application/json';
        else delete headers['content-type'];
        return { ...request, method, path, body, headers };
      },
    },
  ];
}

export interface Latencies {
  count: number;
  p50: number;
  p99: number;
}

/** p50 and p99 of latencies in ms (sorted in place). */
export function percentiles(latencies: number[]): Latencies {
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    Number(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(2));
  return { count: latencies.length, p50: at(0.5), p99: at(0.99) };
}

/**
 * Records the latency of every answer of an autocannon run under the HTTP method of its request
 * (the 95/5 mix: its lists and its updates apart); `take()` once the run is done.
 */
export function latenciesByMethod(instance: Instance) {
  const byMethod = new Map<string, number[]>();
  // With one request in flight per connection, a response answers the request its client
  // built last; the method is the first word of that request's bytes.
  instance.on('response', (client, _status, _bytes, ms) => {
    const sent = (client as { requestIterator: { currentRequest: { requestBuffer: Buffer } } })
      .requestIterator.currentRequest.requestBuffer;
    const method = sent.subarray(0, sent.indexOf(32)).toString();
    let latencies = byMethod.get(method);
    if (!latencies) byMethod.set(method, (latencies = []));
    latencies.push(ms);
  });
  return {
    take: (): Record<string, Latencies> =>
      Object.fromEntries(
        [...byMethod].map(([method, latencies]) => [method, percentiles(latencies)]),
      ),
  };
}

/**
 * A workload's list URL as the repository's first-page request, parsed as the list route does
 * (an admin's view): for the benches that ask the index or the repository in-process.
 */
export function listRequestOf(path: string): ListRequest {
  const params = new URL(`http://bench${path}`).searchParams;
  const get = (name: string) => params.get(name) ?? undefined;
  const search = parseSearch(get('q'));
  const scope = listScope(
    parseOrderBy(get('orderBy'), search !== null),
    parseFilter(get('filter'), 'admin'),
    false,
    search,
  );
  return { ...scope, after: null, limit: Number(get('pageSize') ?? 100) };
}
