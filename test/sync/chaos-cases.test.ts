import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningClis } from '../helpers/cli-process';
import { fixtures } from '../helpers/file-fixtures';
import { startProxy, type Proxy } from './proxy';
import {
  connect,
  contentOf,
  removeDir,
  startNode,
  syncNow,
  tempDir,
  type Node,
  createPortfolio as create,
  editPortfolio as edit,
} from './two-process';

/**
 * The five sequences of issue 26 that broke a rule of docs/sync.md, each replayed over real
 * processes: a hub H and two replicas, A (straight to the hub) and B (through a proxy that can
 * lose answers: "lose B 4" = the hub applies B's next four mutation requests, B never hears).
 */
describe('sync under chaos: the five cases of issue 26', () => {
  let hub: Node;
  let a: Node;
  let b: Node;
  let proxy: Proxy;
  const dirs: string[] = [];

  beforeAll(async () => {
    const [hubDir, aDir, bDir] = await Promise.all([
      tempDir('hub-'),
      tempDir('replica-a-'),
      tempDir('replica-b-'),
    ]);
    dirs.push(hubDir, aDir, bDir);
    [hub, a, b] = await Promise.all([
      startNode('hub', hubDir),
      startNode('A', aDir),
      startNode('B', bDir),
    ]);
    proxy = await startProxy(hub.url);
    await connect(a, hub);
    await connect(b, hub, proxy.url);
  }, 120_000);
  afterAll(async () => {
    await proxy?.close();
    await killRunningClis();
    for (const dir of dirs) await removeDir(dir);
  });

  /** The hub applies B's next `count` mutation requests; their answers never reach B. */
  function loseB(count: number) {
    let left = count;
    proxy.lose = (method, path) => {
      if (method !== 'POST' || !path.startsWith('/api/v1/sync/mutations') || left === 0)
        return false;
      left--;
      return true;
    };
    return () => left;
  }

  /** A round that may fail (an answer lost): its failure is what the test is about. */
  async function trySync(node: Node) {
    return node.request('POST', '/api/v1/sync/run');
  }

  async function detail(node: Node, id: string) {
    const response = await node.request('GET', `/api/v1/portfolio/${id}`);
    expect(response.status, `${node.name} ${id}`).toBe(200);
    return response.body;
  }

  async function conflictsOf(node: Node, id: string) {
    const response = await node.request('GET', `/api/v1/portfolio/${id}/conflicts`);
    expect(response.status, `${node.name} ${id}`).toBe(200);
    return response.body.conflicts as {
      conflictId: string;
      kind: string;
      fields: Record<string, { base: unknown; current: unknown; theirs: unknown }>;
    }[];
  }

  /**
   * Every node holds `id` the same, field for field (or none holds it live), and says idle with
   * nothing pending.
   */
  async function expectConverged(id: string) {
    const [onHub, onA, onB] = await Promise.all([contentOf(hub), contentOf(a), contentOf(b)]);
    for (const [node, content] of [
      [a, onA],
      [b, onB],
    ] as const) {
      expect(content.get(id), `${node.name} ${id}`).toEqual(onHub.get(id));
      const status = (await node.request('GET', '/api/v1/sync/status')).body;
      expect(status, node.name).toMatchObject({ state: 'idle', pending: { changes: 0 } });
    }
  }

  it("1. edit against delete merges against the edit's base: the hub's own edit is kept, the same field a conflict", async () => {
    const p1 = await create(hub, { projectTitle: 'case 1', aboutProject: 'x0', generalTag: [] });
    await syncNow(a);
    await edit(hub, p1, { aboutProject: 'H1', generalTag: ['rust', 'slate'] });
    await edit(a, p1, { aboutProject: 'A1', generalTag: ['pine'] });
    expect((await hub.request('DELETE', `/api/v1/portfolio/${p1}`)).status).toBe(204);
    await syncNow(a);
    await syncNow(b);
    await syncNow(a);

    for (const node of [hub, a, b]) {
      const back = await detail(node, p1);
      expect(back.oboutProject, node.name).toBe('H1');
      expect([...back.generalTag].sort(), node.name).toEqual(['pine', 'rust', 'slate']);
      const conflicts = await conflictsOf(node, p1);
      const about = conflicts.find((c) => c.fields.aboutProject);
      expect(about?.fields.aboutProject, node.name).toEqual({
        base: 'x0',
        current: 'H1',
        theirs: 'A1',
      });
      expect(
        conflicts.some((c) => c.kind === 'delete'),
        node.name,
      ).toBe(true);
      expect(conflicts, node.name).toEqual(await conflictsOf(hub, p1));
    }
    await expectConverged(p1);
  });

  it('2. a refused delete does not stay on the deleting replica after lost answers', async () => {
    const p1 = await create(hub, { projectTitle: 'case 2', aboutProject: 'x0' });
    await syncNow(b);
    await edit(hub, p1, { aboutProject: 'H1' });
    expect((await b.request('DELETE', `/api/v1/portfolio/${p1}`)).status).toBe(204);
    const left = loseB(4);
    await trySync(b);
    await trySync(b);
    expect(left()).toBe(0);
    await syncNow(a);
    await syncNow(b);

    for (const node of [hub, a, b]) {
      const live = await detail(node, p1);
      expect(live.oboutProject, node.name).toBe('H1');
      const conflicts = await conflictsOf(node, p1);
      expect(
        conflicts.map((c) => c.kind),
        node.name,
      ).toEqual(['delete']);
      expect(conflicts, node.name).toEqual(await conflictsOf(hub, p1));
    }
    await expectConverged(p1);
  });

  it("3. a provisional conflict is replaced by the hub's after lost answers", async () => {
    const p1 = await create(hub, { projectTitle: 'case 3', aboutProject: 'x0' });
    await syncNow(b);
    await edit(hub, p1, { aboutProject: 'H1' });
    await edit(b, p1, { aboutProject: 'B1' });
    const left = loseB(4);
    await trySync(b);
    await trySync(b);
    expect(left()).toBe(0);
    await syncNow(a);
    await syncNow(b);

    const onHub = await conflictsOf(hub, p1);
    expect(onHub).toHaveLength(1);
    expect(onHub[0]!.fields.aboutProject).toEqual({ base: 'x0', current: 'H1', theirs: 'B1' });
    for (const node of [a, b]) expect(await conflictsOf(node, p1), node.name).toEqual(onHub);
    await expectConverged(p1);
  });

  it("4. a delete and a restore between two rounds end at the hub's revision", async () => {
    const p1 = await create(hub, { projectTitle: 'case 4' });
    await syncNow(b);
    await syncNow(a);
    expect((await b.request('DELETE', `/api/v1/portfolio/${p1}`)).status).toBe(204);
    expect((await b.request('POST', `/api/v1/trash/${p1}/restore`)).status).toBe(200);
    await syncNow(b);

    const onHub = await detail(hub, p1);
    const onB = await detail(b, p1);
    expect(onB.revision).toBe(onHub.revision);
    expect(onB.modifiedBy).toBe(onHub.modifiedBy);
    await expectConverged(p1);
  });

  it('5. a file description edited on both sides: a conflict shows both, nothing dropped', async () => {
    const p1 = await create(hub, { projectTitle: 'case 5' });
    const cover = await fixtures.jpeg(40, 30);
    const put = await hub.request('PUT', `/api/v1/portfolio/${p1}/cover`, {
      originalFilename: 'cover.jpg',
      data: cover.toString('base64'),
    });
    expect(put.status).toBe(200);
    const fileId = put.body.fileId ?? (await detail(hub, p1)).cover.fileId;
    await syncNow(a);
    const path = `/api/v1/portfolio/${p1}/files/${fileId}`;
    expect((await hub.request('PATCH', path, { description: 'HD' })).status).toBe(200);
    expect((await a.request('PATCH', path, { description: 'AD' })).status).toBe(200);
    await syncNow(a);
    await syncNow(b);

    for (const node of [hub, a, b]) {
      const shown = JSON.stringify({
        cover: (await detail(node, p1)).cover.description,
        conflicts: await conflictsOf(node, p1),
      });
      expect(shown, node.name).toContain('"HD"');
      expect(shown, node.name).toContain('"AD"');
      expect(await conflictsOf(node, p1), node.name).toEqual(await conflictsOf(hub, p1));
    }
    await expectConverged(p1);
  });
});
