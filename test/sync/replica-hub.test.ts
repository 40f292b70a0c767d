import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningClis } from '../helpers/cli-process';
import { fixtures } from '../helpers/file-fixtures';
import {
  connect,
  contentOf,
  removeDir,
  startHubAndReplica,
  syncNow,
  type Node,
  createPortfolio as create,
  editPortfolio as edit,
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
    ({ hub, replica } = await startHubAndReplica(dirs));
    await connect(replica, hub);
  }, 120_000);
  afterAll(async () => {
    await killRunningClis();
    for (const dir of dirs) await removeDir(dir);
  });

  async function detail(node: Node, id: string) {
    const response = await node.request('GET', `/api/v1/portfolio/${id}`);
    expect(response.status, `${node.name} ${id}`).toBe(200);
    return response;
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
    const fileId = pulled.body.cover.fileId;
    const bytes = await fetch(`${replica.url}/api/v1/portfolio/${onHub}/files/${fileId}`, {
      headers: { authorization: replica.session },
    });
    expect(bytes.status).toBe(200);
    expect(Buffer.from(await bytes.arrayBuffer()).equals(cover)).toBe(true);

    const onReplica = await create(replica, { projectTitle: 'Made on the replica' });
    const upload = await replica.request('PUT', `/api/v1/portfolio/${onReplica}/cover`, {
      originalFilename: 'same.jpg',
      data: cover.toString('base64'),
    });
    expect(upload.status).toBe(200);
    await edit(replica, onHub, { aboutProject: 'edited offline' });

    const second = await syncNow(replica);
    expect(second.pushed).toBe(2);
    // The same file is on both sides already: transferred once, never again.
    expect(second.blobsUp).toBe(0);
    expect((await detail(hub, onReplica)).body).toMatchObject({
      projectTitle: 'Made on the replica',
    });
    expect((await detail(hub, onHub)).body).toMatchObject({ oboutProject: 'edited offline' });
    await expectConverged();

    const status = await replica.request('GET', '/api/v1/sync/status');
    expect(status.body).toMatchObject({ state: 'idle', lastError: null, pending: { changes: 0 } });
    expect(status.body.lastSuccess).toBeGreaterThan(0);
  });

  it('the same field changed on both sides: a conflict on both, nothing lost, and resolving syncs', async () => {
    const id = await create(hub, { projectTitle: 'before' });
    await syncNow(replica);
    await edit(hub, id, { projectTitle: 'hub title' });
    await edit(replica, id, { projectTitle: 'my title' });

    const round = await syncNow(replica);
    expect(round.conflicts).toBeGreaterThanOrEqual(1);
    const onHub = await hub.request('GET', `/api/v1/portfolio/${id}/conflicts`);
    expect(onHub.body.conflicts).toHaveLength(1);
    const conflict = onHub.body.conflicts[0];
    expect(conflict).toMatchObject({
      kind: 'field',
      fields: { projectTitle: { base: 'before', current: 'hub title', theirs: 'my title' } },
    });
    const onReplica = await replica.request('GET', `/api/v1/portfolio/${id}/conflicts`);
    expect(onReplica.body.conflicts).toEqual(onHub.body.conflicts);
    expect((await detail(replica, id)).body.projectTitle).toBe('hub title');
    expect((await replica.request('GET', '/api/v1/sync/status')).body.conflicts).toBe(1);
    await expectConverged();

    // Resolved on the replica (keep mine): the hub takes the value and drops the conflict.
    const resolved = await replica.request(
      'POST',
      `/api/v1/conflicts/${conflict.conflictId}/resolve`,
      {
        keep: 'theirs',
      },
    );
    expect(resolved.status, JSON.stringify(resolved.body)).toBe(200);
    await syncNow(replica);
    expect((await detail(hub, id)).body.projectTitle).toBe('my title');
    expect((await hub.request('GET', `/api/v1/portfolio/${id}/conflicts`)).body.conflicts).toEqual(
      [],
    );
    expect(
      (await replica.request('GET', `/api/v1/portfolio/${id}/conflicts`)).body.conflicts,
    ).toEqual([]);
    await expectConverged();
  });

  it('different fields and tag sets changed on both sides merge without a conflict', async () => {
    const id = await create(hub, { projectTitle: 'merge me', generalTag: ['old'] });
    await syncNow(replica);
    await edit(hub, id, {
      aboutProject: 'from hub',
      generalTag: ['old', 'x'],
    });
    await edit(replica, id, {
      projectDetail: 'from replica',
      generalTag: ['y'],
    });
    const round = await syncNow(replica);
    expect(round.conflicts).toBe(0);
    const merged = await hub.request('GET', `/api/v1/portfolio/${id}`);
    expect(merged.body).toMatchObject({ oboutProject: 'from hub', projectDetail: 'from replica' });
    expect([...merged.body.generalTag].sort()).toEqual(['x', 'y']);
    expect((await hub.request('GET', `/api/v1/portfolio/${id}/conflicts`)).body.conflicts).toEqual(
      [],
    );
    await expectConverged();
  });

  it('an edit against a delete wins with a note; deletes travel only as tombstones', async () => {
    const edited = await create(hub, { projectTitle: 'edit beats delete' });
    const goneOnHub = await create(hub, { projectTitle: 'deleted on the hub' });
    const goneHere = await create(hub, { projectTitle: 'deleted on the replica' });
    await syncNow(replica);
    expect((await hub.request('DELETE', `/api/v1/portfolio/${edited}`)).status).toBe(204);
    await edit(replica, edited, { aboutProject: 'still wanted' });
    expect((await hub.request('DELETE', `/api/v1/portfolio/${goneOnHub}`)).status).toBe(204);
    expect((await replica.request('DELETE', `/api/v1/portfolio/${goneHere}`)).status).toBe(204);
    await syncNow(replica);

    for (const node of [hub, replica]) {
      const back = await node.request('GET', `/api/v1/portfolio/${edited}`);
      expect(back.status, node.name).toBe(200);
      expect(back.body.oboutProject).toBe('still wanted');
      const notes = (await node.request('GET', `/api/v1/portfolio/${edited}/conflicts`)).body
        .conflicts;
      expect(
        notes.map((c: { kind: string }) => c.kind),
        node.name,
      ).toEqual(['delete']);
      expect((await node.request('GET', `/api/v1/portfolio/${goneOnHub}`)).status, node.name).toBe(
        404,
      );
      expect((await node.request('GET', `/api/v1/portfolio/${goneHere}`)).status, node.name).toBe(
        404,
      );
      const trash = (await node.request('GET', '/api/v1/trash')).body.lists.map(
        (t: { portfolioId: string }) => t.portfolioId,
      );
      expect(trash, node.name).toEqual(expect.arrayContaining([goneOnHub, goneHere]));
    }
    await expectConverged();
  });
});
