import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { spawnCli, type CliProcess } from '../helpers/cli-process';

/**
 * Two (or more) real `portfolio serve` processes over real HTTP for the sync tests: a hub and
 * replicas, each its own data directory, started from the sources as a user would.
 */

export const ADMIN = { username: 'admin', password: 'admin-password-1' };

export interface Node {
  name: string;
  dataDir: string;
  proc: CliProcess;
  url: string;
  session: string;
  request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: T; headers: Headers }>;
}

export async function tempDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/**
 * A hub and a replica, each a `portfolio serve` over a new temp directory (added to `dirs`, for
 * the test to remove), started side by side; not yet connected.
 */
export async function startHubAndReplica(dirs: string[]): Promise<{ hub: Node; replica: Node }> {
  const [hubDir, replicaDir] = await Promise.all([tempDir('hub-'), tempDir('replica-')]);
  dirs.push(hubDir, replicaDir);
  const [hub, replica] = await Promise.all([
    startNode('hub', hubDir),
    startNode('replica', replicaDir),
  ]);
  return { hub, replica };
}

/** Starts `portfolio serve` on a free port over `dataDir` and signs the admin in. */
export async function startNode(
  name: string,
  dataDir: string,
  env: Record<string, string> = {},
  port = 0,
): Promise<Node> {
  const proc = spawnCli(['serve', '--port', String(port), '--data-dir', dataDir], {
    PORTFOLIO_ADMIN_USERNAME: ADMIN.username,
    PORTFOLIO_ADMIN_PASSWORD: ADMIN.password,
    PORTFOLIO_SYNC_INTERVAL_S: '0',
    PORTFOLIO_LOG_LEVEL: 'warn',
    ...env,
  });
  const url = (await proc.url(60_000)).replace('localhost', '127.0.0.1');
  const node: Node = {
    name,
    dataDir,
    proc,
    url,
    session: '',
    async request(method, path, body, headers = {}) {
      const all: Record<string, string> = { ...headers };
      if (node.session) all.authorization = node.session;
      let payload: string | undefined;
      if (body !== undefined) {
        payload = JSON.stringify(body);
        all['content-type'] ??= 'application/json';
      }
      const response = await fetch(url + path, { method, headers: all, body: payload });
      const text = await response.text();
      const json = (response.headers.get('content-type') ?? '').includes('json') && text;
      return {
        status: response.status,
        body: json ? JSON.parse(text) : text,
        headers: response.headers,
      };
    },
  };
  const signIn = await node.request<{ sessionId: string }>('POST', '/api/v1/appauth', ADMIN);
  if (signIn.status !== 200)
    throw new Error(`${name}: sign-in failed ${JSON.stringify(signIn.body)}`);
  node.session = signIn.body.sessionId;
  return node;
}

/** SIGTERM (writes finish) or SIGKILL; resolves once the process is gone. */
export async function stopNode(node: Node, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (node.proc.child.exitCode === null && node.proc.child.signalCode === null)
    node.proc.child.kill(signal);
  await node.proc.exited;
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/** Every live portfolio of a node as the feed shows it, without the node's own seq. */
export async function contentOf(node: Node): Promise<Map<string, Record<string, unknown>>> {
  const content = new Map<string, Record<string, unknown>>();
  let since = 0;
  for (;;) {
    const page = await node.request('GET', `/api/v1/changes?since=${since}&limit=1000`);
    if (page.status !== 200) throw new Error(`${node.name}: feed ${page.status}`);
    for (const change of page.body.changes) {
      if (change.deleted) continue;
      const { seq: _seq, ...portfolio } = change.portfolio;
      content.set(change.portfolioId, portfolio);
    }
    since = page.body.next;
    if (!page.body.hasMore) return content;
  }
}

/** Sets the replica up against the hub (admin account) and answers the config. */
export async function connect(replica: Node, hub: Node, hubUrl = hub.url) {
  const response = await replica.request('PUT', '/api/v1/sync/config', {
    hubUrl,
    username: ADMIN.username,
    password: ADMIN.password,
  });
  if (response.status !== 200)
    throw new Error(`config failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

/** One round on the replica; throws with the answer unless it is 200. */
export async function syncNow(replica: Node) {
  const response = await replica.request('POST', '/api/v1/sync/run');
  if (response.status !== 200)
    throw new Error(`sync failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as {
    pulled: number;
    pushed: number;
    conflicts: number;
    blobsUp: number;
    blobsDown: number;
    bytesUp: number;
    bytesDown: number;
  };
}

export function portfolioBody(overrides: Record<string, unknown> = {}) {
  return {
    memberBarcode: 'M0001',
    category: 'Interior',
    projectTitle: 'Lake house',
    projectDetail: 'A timber house by the lake.',
    ...overrides,
  };
}

/** Creates a portfolio on `node` (201 expected) and answers its id. */
export async function createPortfolio(node: Node, body: Record<string, unknown>): Promise<string> {
  const created = await node.request('POST', '/api/v1/portfolio', portfolioBody(body));
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.portfolioId;
}

/** An update with the required fields as they are now, plus `changes` (200 expected). */
export async function editPortfolio(
  node: Node,
  id: string,
  changes: Record<string, unknown>,
): Promise<void> {
  const now = await node.request(
    'GET',
    `/api/v1/portfolio/${id}?field=memberBarcode,category,projectTitle,projectDetail`,
  );
  expect(now.status).toBe(200);
  const { memberBarcode, category, projectTitle, projectDetail } = now.body;
  const response = await node.request('PUT', `/api/v1/portfolio/${id}`, {
    memberBarcode,
    category,
    projectTitle,
    projectDetail,
    ...changes,
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
}
