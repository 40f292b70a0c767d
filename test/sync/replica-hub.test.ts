import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { killRunningClis } from '../helpers/cli-process';
import { fixtures } from '../helpers/file-fixtures';
import {
  connect,
  contentOf,
  portfolioBody,
  removeDir,
  startNode,
  stopNode,
  syncNow,
  tempDir,
  type Node,
} from './two-process';

/**
 * Sync between two real server processes over real HTTP (DESIGN §10): a hub and a replica, each
 * a `portfolio serve` of the sources with its own data directory.
 */
describe('replica and hub, two processes', () => {
  let hub: Node;
  let replica: Node;
  const dirs: string[] = [];

  beforeAll(async () => {
    const [hubDir, replicaDir] = await Promise.all([tempDir('hub-'), tempDir('replica-')]);
    dirs.push(hubDir, replicaDir);
    [hub, replica] = await Promise.all([
      startNode('hub', hubDir),
      startNode('replica', replicaDir),
    ]);
  }, 120_000);
  afterAll(async () => {
    await killRunningClis();
    for (const dir of dirs) await removeDir(dir);
  });

  async function create(node: Node, body: Record<string, unknown>): Promise<string> {
    const created = await node.request('POST', '/api/v1/portfolio', portfolioBody(body));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.portfolioId;
  }

  async function detail(node: Node, id: string) {
    return node.request(
      'GET',
      `/api/v1/portfolio/${id}?field=portfolioId,projectTitle,aboutProject,generalTag,revision,cover.fileId,cover.md5Checksum`,
    );
  }

  async function expectConverged() {
    const [a, b] = await Promise.all([contentOf(hub), contentOf(replica)]);
    expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
    for (const [id, portfolio] of a) expect(b.get(id), id).toEqual(portfolio);
  }

  it('signs in once, pulls the hub, pushes local work with its files, and both hold the same', async () => {
    const onHub = await create(hub, { projectTitle: 'Made on the hub', generalTag: ['a'] });
    const cover = await fixtures.jpeg(64, 48);
    const put = await hub.request('PUT', `/api/v1/portfolio/${onHub}/cover`, {
      originalFilename: 'cover.jpg',
      data: cover.toString('base64'),
    });
    expect(put.status).toBe(200);

    const config = await connect(replica, hub);
    expect(config).toMatchObject({ hubUrl: hub.url, username: 'admin' });
    expect(config.deviceId).toBeTruthy();
    expect(config.replicaId).toBeTruthy();
    expect(JSON.stringify(config)).not.toMatch(/token/i);

    const first = await syncNow(replica);
    expect(first.pulled).toBeGreaterThanOrEqual(1);
    expect(first.blobsDown).toBe(1);
    const pulled = await detail(replica, onHub);
    expect(pulled.body).toMatchObject({ projectTitle: 'Made on the hub', generalTag: ['a'] });
    const bytes = await replica.request('GET', `/api/v1/portfolio/${onHub}/cover`);
    expect(bytes.status).toBeLessThan(300);

    const onReplica = await create(replica, { projectTitle: 'Made on the replica' });
    const upload = await replica.request('PUT', `/api/v1/portfolio/${onReplica}/cover`, {
      originalFilename: 'same.jpg',
      data: cover.toString('base64'),
    });
    expect(upload.status).toBe(200);
    const edit = await replica.request('PUT', `/api/v1/portfolio/${onHub}`, {
      aboutProject: 'edited offline',
    });
    expect(edit.status).toBe(200);

    const second = await syncNow(replica);
    expect(second.pushed).toBe(2);
    // The same file is on both sides already: transferred once, never again.
    expect(second.blobsUp).toBe(0);
    expect((await detail(hub, onReplica)).body).toMatchObject({
      projectTitle: 'Made on the replica',
    });
    expect((await detail(hub, onHub)).body).toMatchObject({ aboutProject: 'edited offline' });
    await expectConverged();

    const status = await replica.request('GET', '/api/v1/sync/status');
    expect(status.body).toMatchObject({ state: 'idle', lastError: null, pending: { changes: 0 } });
    expect(status.body.lastSuccess).toBeGreaterThan(0);
  });
});
