import { afterAll, describe, expect, it } from 'vitest';
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

/** mulberry32: a small seeded generator, so a failing run can be repeated with its seed. */
function seeded(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * kill -9 of the replica and of the hub at random points of a pull and of a push, several rounds:
 * afterwards both sides hold equal content (every portfolio, revision, field, file hash), with
 * no duplicate and nothing lost. The seed is printed; SYNC_KILL_SEED repeats a run.
 */
describe('sync survives kill -9 of either side', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    await killRunningClis();
    for (const dir of dirs) await removeDir(dir);
  });

  it('converges after kills during pulls and pushes', async () => {
    const seed = Number(process.env.SYNC_KILL_SEED ?? Math.floor(Math.random() * 2 ** 31));
    console.log(`sync kill test seed: ${seed} (SYNC_KILL_SEED=${seed} repeats it)`);
    const random = seeded(seed);
    const [hubDir, replicaDir] = await Promise.all([tempDir('hub-'), tempDir('replica-')]);
    dirs.push(hubDir, replicaDir);
    let [hub, replica] = await Promise.all([
      startNode('hub', hubDir),
      startNode('replica', replicaDir),
    ]);
    const hubPort = Number(new URL(hub.url).port);
    await connect(replica, hub);
    const cover = await fixtures.jpeg(48, 32);

    const made: string[] = [];
    const create = async (node: Node, title: string, withCover: boolean) => {
      const created = await node.request(
        'POST',
        '/api/v1/portfolio',
        portfolioBody({ projectTitle: title }),
      );
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const id = created.body.portfolioId as string;
      made.push(id);
      if (withCover) {
        const put = await node.request('PUT', `/api/v1/portfolio/${id}/cover`, {
          originalFilename: `${title}.jpg`,
          data: cover.toString('base64'),
        });
        expect(put.status).toBe(200);
      }
    };

    for (let round = 0; round < 4; round++) {
      // Even rounds load the pull (hub changes), odd rounds the push (replica changes).
      const busy = round % 2 === 0 ? hub : replica;
      for (let i = 0; i < 15; i++) await create(busy, `r${round}-${i}`, random() < 0.3);
      const victim = random() < 0.5 ? 'replica' : 'hub';
      const delay = Math.floor(random() * 600);
      const run = replica.request('POST', '/api/v1/sync/run').catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, delay));
      console.log(
        `round ${round}: kill -9 the ${victim} ${delay} ms into a ${busy === hub ? 'pull' : 'push'}`,
      );
      if (victim === 'hub') {
        await stopNode(hub, 'SIGKILL');
        await run;
        hub = await startNode('hub', hubDir, {}, hubPort);
      } else {
        await stopNode(replica, 'SIGKILL');
        await run;
        replica = await startNode('replica', replicaDir);
      }
    }

    // Let it finish: rounds until nothing is pending, then both sides hold the same.
    for (let i = 0; i < 5; i++) {
      await syncNow(replica);
      const status = (await replica.request('GET', '/api/v1/sync/status')).body;
      if (status.pending.changes === 0) break;
    }
    await syncNow(replica);
    const [onHub, onReplica] = await Promise.all([contentOf(hub), contentOf(replica)]);
    expect([...onHub.keys()].sort()).toEqual([...new Set(made)].sort());
    expect([...onReplica.keys()].sort()).toEqual([...onHub.keys()].sort());
    for (const [id, portfolio] of onHub) expect(onReplica.get(id), id).toEqual(portfolio);
    // No duplicate: every title made once is there once.
    const titles = [...onHub.values()].map((p) => p.projectTitle);
    expect(new Set(titles).size).toBe(titles.length);
  }, 600_000);
});
