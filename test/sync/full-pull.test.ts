import { cp } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningClis } from '../helpers/cli-process';
import { startPairBehindProxy, type Proxy } from './proxy';
import {
  connect,
  contentOf,
  createPortfolio as create,
  editPortfolio as edit,
  removeDir,
  startNode,
  stopNode,
  syncNow,
  tempDir,
  type Node,
} from './two-process';

/**
 * A full pull never overwrites silently (DESIGN §10), with real processes: the hub forgot old
 * changes (410, same library: the bases hold, pending edits merge three-way), and the hub became
 * another library (no base: every value that differs is a conflict on both sides).
 */
describe('sync full pull with pending edits, two processes', () => {
  let hub: Node;
  let replica: Node;
  let proxy: Proxy;
  let hubPort: number;
  const dirs: string[] = [];

  beforeAll(async () => {
    ({ hub, replica, proxy, hubPort } = await startPairBehindProxy(dirs));
  }, 120_000);
  afterAll(async () => {
    await proxy.close();
    await killRunningClis();
    for (const dir of dirs) await removeDir(dir);
  });

  async function detail(node: Node, id: string) {
    const response = await node.request('GET', `/api/v1/portfolio/${id}`);
    expect(response.status, `${node.name} ${id}`).toBe(200);
    return response.body;
  }

  async function conflictsOf(node: Node, id: string) {
    const response = await node.request('GET', `/api/v1/portfolio/${id}/conflicts`);
    expect(response.status).toBe(200);
    return response.body.conflicts as {
      conflictId: string;
      kind: string;
      fields: Record<string, { base: unknown; current: unknown; theirs: unknown }>;
    }[];
  }

  async function expectConverged() {
    const [a, b] = await Promise.all([contentOf(hub), contentOf(replica)]);
    expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
    for (const [id, portfolio] of a) expect(b.get(id), id).toEqual(portfolio);
  }

  /** The next feed read past 0 answers 410, as a hub that pruned its feed does. */
  function forceResync(): () => boolean {
    let gone = true;
    proxy.inject = (method, path) => {
      if (gone && method === 'GET' && /\/api\/v1\/changes\?since=[1-9]/.test(path)) {
        gone = false;
        return {
          status: 410,
          body: {
            result: 'error',
            statusCode: 410,
            error: 'Gone',
            code: 'RESYNC_REQUIRED',
            message: 'Changes that old are no longer known; start again from since=0.',
            details: [],
          },
        };
      }
      return undefined;
    };
    return () => !gone;
  }

  it('410: the same field edited on both sides is a conflict on both, other edits merge, nothing lost', async () => {
    const both = await create(hub, { projectTitle: 'Lake house', generalTag: ['wood'] });
    const hubOnly = await create(hub, { projectTitle: 'Hub only' });
    const mineOnly = await create(hub, { projectTitle: 'Mine only' });
    await syncNow(replica);

    // Offline for a while: both sides change things.
    await edit(hub, both, { projectTitle: 'Lake house (final)', generalTag: ['wood', 'hub'] });
    await edit(replica, both, { projectTitle: 'Cabin', generalTag: ['wood', 'mine'] });
    await edit(hub, hubOnly, { aboutProject: 'written on the hub' });
    await edit(replica, mineOnly, { aboutProject: 'written here' });

    const used = forceResync();
    const round = await syncNow(replica);
    proxy.inject = () => undefined;
    expect(used()).toBe(true);
    expect(round.conflicts).toBeGreaterThanOrEqual(1);
    expect(replica.proc.stdout() + replica.proc.stderr()).toMatch(/full pull from 0/);

    for (const node of [hub, replica]) {
      const record = await detail(node, both);
      expect(record.projectTitle, node.name).toBe('Lake house (final)');
      // Tag sets still merge against the kept base.
      expect([...record.generalTag].sort(), node.name).toEqual(['hub', 'mine', 'wood']);
      const conflicts = await conflictsOf(node, both);
      expect(conflicts, node.name).toHaveLength(1);
      expect(conflicts[0]!.conflictId).not.toMatch(/^local-/);
      expect(conflicts[0]!.fields).toEqual({
        projectTitle: { base: 'Lake house', current: 'Lake house (final)', theirs: 'Cabin' },
      });
      expect((await detail(node, hubOnly)).oboutProject).toBe('written on the hub');
      expect((await detail(node, mineOnly)).oboutProject).toBe('written here');
      expect(await conflictsOf(node, hubOnly)).toEqual([]);
      expect(await conflictsOf(node, mineOnly)).toEqual([]);
    }
    expect((await replica.request('GET', '/api/v1/sync/status')).body).toMatchObject({
      state: 'idle',
      pending: { changes: 0 },
    });
    await expectConverged();
  });

  it('another libraryId: a pending edit conflicts field by field, an unedited record takes the hub, the rest is pushed again', async () => {
    const edited = await create(hub, { projectTitle: 'Edited here' });
    const untouched = await create(hub, { projectTitle: 'Untouched here' });
    const onlyHere = await create(replica, { projectTitle: 'Only on the replica' });
    await syncNow(replica);
    await edit(replica, edited, { projectTitle: 'Typed offline', aboutProject: 'same on both' });
    const before = await contentOf(replica);

    // The hub is replaced by an empty one (a new libraryId), which then gets portfolios with
    // the same ids and other values.
    await stopNode(hub);
    const emptyDir = await tempDir('hub-replaced-');
    dirs.push(emptyDir);
    hub = await startNode('hub', emptyDir, {}, hubPort);
    for (const [id, title] of [
      [edited, 'Typed on the new hub'],
      [untouched, 'First on the new hub'],
    ] as const) {
      const made = await hub.request('POST', '/api/v1/portfolio', {
        portfolioId: id,
        memberBarcode: 'M0001',
        category: 'Interior',
        projectTitle: title,
        projectDetail: 'A timber house by the lake.',
        oboutProject: 'same on both',
      });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
    }
    await edit(hub, untouched, { projectTitle: 'Renamed on the new hub' });

    expect((await replica.request('POST', '/api/v1/sync/run')).body.code).toBe(
      'SYNC_DEVICE_REVOKED',
    );
    await connect(replica, hub, proxy.url);
    await syncNow(replica);
    expect(replica.proc.stdout() + replica.proc.stderr()).toMatch(/another library now/);

    // The pending edit: the hub's value shown, this library's as theirs, on both sides.
    for (const node of [hub, replica]) {
      const record = await detail(node, edited);
      expect(record.projectTitle, node.name).toBe('Typed on the new hub');
      const conflicts = await conflictsOf(node, edited);
      expect(conflicts, node.name).toHaveLength(1);
      expect(conflicts[0]!.fields).toEqual({
        projectTitle: { base: null, current: 'Typed on the new hub', theirs: 'Typed offline' },
      });
    }
    // No local edit: the hub's record is taken, and history keeps the older local version.
    expect((await detail(replica, untouched)).projectTitle).toBe('Renamed on the new hub');
    expect(await conflictsOf(replica, untouched)).toEqual([]);
    const history = await replica.request('GET', `/api/v1/portfolio/${untouched}/revisions/1`);
    expect(history.status).toBe(200);
    expect(history.body.projectTitle).toBe('Untouched here');
    // What the new hub lacked is pushed again; nothing is deleted for being absent.
    expect((await detail(hub, onlyHere)).projectTitle).toBe('Only on the replica');
    expect([...(await contentOf(replica)).keys()].sort()).toEqual([...before.keys()].sort());
    await expectConverged();
  }, 120_000); // a hub process started in the test: slow on a busy machine

  it('a hub restored from an older copy and edited since: the revision it lost is no base, so both sides show the differences', async () => {
    const id = await create(hub, { projectTitle: 'Kiln' });
    await syncNow(replica);
    // The hub's backup: a copy of its data directory, taken while it is stopped.
    await stopNode(hub);
    const backup = await tempDir('hub-backup-');
    dirs.push(backup);
    await cp(hub.dataDir, backup, { recursive: true });
    hub = await startNode('hub', hub.dataDir, {}, hubPort);

    await edit(hub, id, { projectTitle: 'Kiln v2' });
    await edit(hub, id, { projectTitle: 'Kiln v3' });
    await syncNow(replica);
    await edit(replica, id, { aboutProject: 'typed here' });

    // Restored (same libraryId), then edited there: its revision 2 is not the one this replica
    // holds, and its feed is behind the replica's cursor (410).
    await stopNode(hub);
    const restored = await tempDir('hub-restored-');
    dirs.push(restored);
    await cp(backup, restored, { recursive: true });
    hub = await startNode('hub', restored, {}, hubPort);
    await edit(hub, id, { projectTitle: 'Kiln after the restore' });

    await syncNow(replica);
    for (const node of [hub, replica]) {
      const record = await detail(node, id);
      expect(record.projectTitle, node.name).toBe('Kiln after the restore');
      const conflicts = await conflictsOf(node, id);
      expect(conflicts, node.name).toHaveLength(1);
      expect(conflicts[0]!.fields).toMatchObject({
        projectTitle: { base: null, current: 'Kiln after the restore', theirs: 'Kiln v3' },
        aboutProject: { base: null, theirs: 'typed here' },
      });
    }
    await expectConverged();
  }, 180_000);
});
