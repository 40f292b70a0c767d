import { cp } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningClis } from '../helpers/cli-process';
import {
  connect,
  contentOf,
  removeDir,
  startHubAndReplica,
  startNode,
  stopNode,
  syncNow,
  tempDir,
  type Node,
  createPortfolio as create,
  editPortfolio as edit,
} from './two-process';

/**
 * Bad input a replica meets in the field, with real processes over real HTTP: a hub restored
 * from a backup older than the replica's base (a mutation with an unknown base revision), a
 * data directory copied to a second computer (a replica id reused by another device), and the
 * progress a person watches while a round with large files runs.
 */
describe('sync bad input, two processes', () => {
  let hub: Node;
  let replica: Node;
  let hubPort: number;
  const dirs: string[] = [];

  beforeAll(async () => {
    ({ hub, replica } = await startHubAndReplica(dirs));
    hubPort = Number(new URL(hub.url).port);
    await connect(replica, hub);
  }, 120_000);
  afterAll(async () => {
    await killRunningClis();
    for (const dir of dirs) await removeDir(dir);
  });

  async function detail(node: Node, id: string) {
    const response = await node.request('GET', `/api/v1/portfolio/${id}`);
    expect(response.status, `${node.name} ${id}`).toBe(200);
    return response.body;
  }

  async function statusOf(node: Node) {
    const response = await node.request('GET', '/api/v1/sync/status');
    expect(response.status).toBe(200);
    return response.body;
  }

  async function hubBackup(): Promise<string> {
    // The hub's backup: a copy of its data directory taken while it is stopped.
    await stopNode(hub);
    const backup = await tempDir('hub-backup-');
    dirs.push(backup);
    await cp(hubDir(), backup, { recursive: true });
    hub = await startNode('hub', hubDir(), {}, hubPort);
    return backup;
  }

  async function restoreHub(backup: string): Promise<void> {
    await stopNode(hub);
    const restored = await tempDir('hub-restored-');
    dirs.push(restored);
    await cp(backup, restored, { recursive: true });
    hub = await startNode('hub', restored, {}, hubPort);
    hubDirs.push(restored);
  }

  const hubDirs: string[] = [];
  const hubDir = () => hubDirs.at(-1) ?? dirs[0]!;

  async function expectConverged(a: Node, b: Node) {
    const [left, right] = await Promise.all([contentOf(a), contentOf(b)]);
    expect([...right.keys()].sort()).toEqual([...left.keys()].sort());
    for (const [id, portfolio] of left) expect(right.get(id), id).toEqual(portfolio);
  }

  const logOf = (node: Node) => node.proc.stdout() + node.proc.stderr();

  it('a hub restored from an older copy: the replica says so in words, reads it again and loses nothing', async () => {
    const id = await create(hub, { projectTitle: 'restored later' });
    await syncNow(replica);
    const backup = await hubBackup();

    // After the backup: the hub moves on, and the replica bases its work on that newer revision.
    await edit(hub, id, { aboutProject: 'lost with the restore' });
    await syncNow(replica);
    const based = await detail(replica, id);
    expect(based.oboutProject).toBe('lost with the restore');

    // The hub is restored: it never had the revision the replica builds on, nor its feed cursor.
    await restoreHub(backup);
    const hubBefore = await detail(hub, id);
    expect(hubBefore.revision).toBeLessThan(based.revision);
    const cursor = await hub.request('GET', '/api/v1/changes?since=1000000');
    expect(cursor.status).toBe(410);
    expect(cursor.body.message).toMatch(/restored from an older copy/);

    await edit(replica, id, { projectDetail: 'typed on the replica' });
    await syncNow(replica);
    expect(logOf(replica)).toMatch(/restored from an older copy\?\); resync.\); full pull from 0/);
    expect(await statusOf(replica)).toMatchObject({ state: 'idle', lastError: null });
    // Nothing lost: the replica's work (and the revision the hub forgot) is on the hub again.
    const hubAfter = await detail(hub, id);
    expect(hubAfter).toMatchObject({
      projectDetail: 'typed on the replica',
      oboutProject: 'lost with the restore',
    });
    await expectConverged(hub, replica);
  });

  it('a mutation with an unknown base revision: said in words, nothing applied half-way, full pull, nothing lost', async () => {
    const id = await create(hub, { projectTitle: 'based on a forgotten revision' });
    await syncNow(replica);
    const backup = await hubBackup();
    await edit(hub, id, { aboutProject: 'forgotten by the hub' });
    await syncNow(replica);
    const based = await detail(replica, id);

    // Restored, and then busy enough that its feed passes the replica's cursor again: the feed
    // cannot tell, but the base revision of the replica's next change is unknown to the hub.
    await restoreHub(backup);
    const missed: string[] = [];
    for (let i = 0; i < 4; i++) missed.push(await create(hub, { projectTitle: `after ${i}` }));
    const hubBefore = await detail(hub, id);
    expect(hubBefore.revision).toBeLessThan(based.revision);

    // The hub refuses such a mutation whole, in words.
    const direct = await hub.request('POST', '/api/v1/sync/mutations', {
      replicaId: 'a-test-tool',
      mutations: [
        {
          mutationId: 'a-test-tool:1',
          portfolioId: id,
          baseRevision: based.revision,
          op: 'update',
          fields: { projectDetail: 'never applied' },
          files: [],
        },
      ],
    });
    expect(direct.status).toBe(200);
    expect(direct.body.results[0]).toMatchObject({
      status: 'rejected',
      error: {
        code: 'UNKNOWN_BASE_REVISION',
        message: `The hub has revision ${hubBefore.revision} of this portfolio, not ${based.revision}; pull first.`,
      },
    });
    expect(await detail(hub, id)).toEqual(hubBefore);

    await edit(replica, id, { projectDetail: 'typed on the replica' });
    await syncNow(replica);
    expect(logOf(replica)).toMatch(
      new RegExp(
        `the hub does not know the revision this library's changes are based on \\(portfolio ${id}: ` +
          `The hub has revision ${hubBefore.revision} of this portfolio, not ${based.revision}; pull first.\\); ` +
          'it was probably restored from an older copy',
      ),
    );
    expect(await statusOf(replica)).toMatchObject({ state: 'idle', lastError: null });
    expect(await detail(hub, id)).toMatchObject({
      projectDetail: 'typed on the replica',
      oboutProject: 'forgotten by the hub',
    });
    // The hub's changes the stale cursor skipped are here too.
    for (const other of missed) await detail(replica, other);
    await expectConverged(hub, replica);
  });

  it("a data directory copied to a second computer: both keep their work, and its replica id is not another user's", async () => {
    const user = { username: 'curator2', password: 'curator-password-2' };
    const made = await hub.request('POST', '/api/v1/users', { ...user, role: 'admin' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);

    const id = await create(hub, { projectTitle: 'copied along' });
    await syncNow(replica);
    const original = (await replica.request('GET', '/api/v1/sync/config')).body;

    // The copy: the replica's whole data directory, taken while it is stopped.
    await stopNode(replica);
    const copyDir = await tempDir('replica-copy-');
    dirs.push(copyDir);
    await cp(dirs[1]!, copyDir, { recursive: true });
    replica = await startNode('replica', dirs[1]!);
    const copy = await startNode('copy', copyDir);

    // Both edit the same portfolio at the same local seq under the same (copied) replica id.
    await edit(replica, id, { aboutProject: 'from the original' });
    await edit(copy, id, { projectDetail: 'from the copy' });
    await syncNow(replica);
    await syncNow(copy);
    await syncNow(replica);
    expect(await detail(hub, id)).toMatchObject({
      oboutProject: 'from the original',
      projectDetail: 'from the copy',
    });
    await expectConverged(hub, copy);
    await expectConverged(hub, replica);

    // The copy signs in as the other person: a device and a replica id of its own.
    const signedIn = await copy.request('PUT', '/api/v1/sync/config', {
      hubUrl: hub.url,
      ...user,
    });
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
    expect(signedIn.body.replicaId).not.toBe(original.replicaId);
    await edit(copy, id, { projectTitle: 'copied, then signed in again' });
    await syncNow(copy);
    expect((await detail(hub, id)).projectTitle).toBe('copied, then signed in again');

    // The original's replica id is not that user's to take: refused in words, nothing made.
    const password = await hub.request('POST', '/api/v1/appauth', user);
    const reused = await fetch(`${hub.url}/api/v1/devices`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: password.body.sessionId },
      body: JSON.stringify({ name: 'copy', replicaId: original.replicaId }),
    });
    expect(reused.status).toBe(409);
    expect(await reused.json()).toMatchObject({
      code: 'REPLICA_ID_TAKEN',
      message: `The replica id "${original.replicaId}" belongs to another user's device.`,
    });
    await syncNow(replica); // the original still syncs under its own id
    await stopNode(copy);
  });

  it('progress grows in records and bytes while a round with large files runs', async () => {
    const id = await create(hub, { projectTitle: 'large files' });
    for (let i = 0; i < 4; i++) {
      const line = Buffer.from(`large file ${i}: ${'lorem ipsum dolor sit amet '.repeat(3)}\n`);
      const bytes = Buffer.alloc(8 * 1024 * 1024);
      for (let at = 0; at < bytes.length; at += line.length) line.copy(bytes, at);
      const response = await fetch(`${hub.url}/api/v1/portfolio/${id}/additionalDocument`, {
        method: 'POST',
        headers: {
          authorization: hub.session,
          'content-type': 'text/plain',
          'content-disposition': `attachment; filename="notes-${i}.txt"`,
        },
        body: new Uint8Array(bytes),
      });
      expect(response.status, await response.text()).toBe(201);
    }
    for (let i = 0; i < 20; i++) await create(hub, { projectTitle: `small ${i}` });

    // A new computer: everything comes down in one round.
    const freshDir = await tempDir('replica-fresh-');
    dirs.push(freshDir);
    const fresh = await startNode('fresh', freshDir);
    await connect(fresh, hub);
    const round = fresh.request('POST', '/api/v1/sync/run');
    let finished = false;
    void round.finally(() => {
      finished = true;
    });
    const seen: { state: string; done: number; total: number; bytes: number }[] = [];
    while (!finished) {
      const status = await statusOf(fresh);
      seen.push({ state: status.state, ...status.progress });
    }
    expect((await round).status).toBe(200);
    const running = seen.filter((sample) => sample.state === 'running');
    const bytes = new Set(running.map((sample) => sample.bytes));
    expect(bytes.size, JSON.stringify(running.slice(-5))).toBeGreaterThan(2);
    for (let i = 1; i < running.length; i++) {
      expect(running[i]!.bytes).toBeGreaterThanOrEqual(running[i - 1]!.bytes);
      expect(running[i]!.done).toBeGreaterThanOrEqual(running[i - 1]!.done);
      expect(running[i]!.done).toBeLessThanOrEqual(running[i]!.total);
    }
    const final = (await statusOf(fresh)).progress;
    expect(final.bytes).toBeGreaterThanOrEqual(4 * 8 * 1024 * 1024);
    expect(final.done).toBe(final.total);
    expect(final.done).toBeGreaterThanOrEqual(21);
    await expectConverged(hub, fresh);
    await stopNode(fresh);
  });
});
