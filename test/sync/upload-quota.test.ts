import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningClis } from '../helpers/cli-process';
import {
  connect,
  contentOf,
  createPortfolio,
  removeDir,
  startNode,
  syncNow,
  tempDir,
  type Node,
} from './two-process';

/**
 * A hub's upload quota (issue 24, point 4) must not stop a replica with more new files than it
 * holds: the replica pushes the changes whose files are up, which makes room, and goes on.
 */
describe('a replica pushes past the hub upload quota in slices', () => {
  let hub: Node;
  let replica: Node;
  const dirs: string[] = [];

  beforeAll(async () => {
    const [hubDir, replicaDir] = await Promise.all([tempDir('hub-'), tempDir('replica-')]);
    dirs.push(hubDir, replicaDir);
    [hub, replica] = await Promise.all([
      startNode('hub', hubDir, { PORTFOLIO_UPLOAD_QUOTA_USER_MB: '1' }),
      startNode('replica', replicaDir),
    ]);
    await connect(replica, hub);
  }, 120_000);
  afterAll(async () => {
    await killRunningClis();
    for (const dir of dirs) await removeDir(dir);
  });

  it('three changes with 600 KB of new files each, under a 1 MB quota: all arrive', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = await createPortfolio(replica, { projectTitle: `Big files ${i}` });
      const text = Buffer.from(randomBytes(300 * 1024).toString('hex'));
      const upload = await replica.request('POST', `/api/v1/portfolio/${id}/additionalDocument`, {
        originalFilename: `notes-${i}.txt`,
        data: text.toString('base64'),
      });
      expect(upload.status, JSON.stringify(upload.body)).toBe(201);
      ids.push(id);
    }
    const round = await syncNow(replica);
    expect(round).toMatchObject({ pushed: 3, blobsUp: 3 });
    const onHub = await contentOf(hub);
    for (const id of ids) {
      expect((onHub.get(id)?.additionalDocument as unknown[] | undefined)?.length, id).toBe(1);
    }
    const status = await replica.request('GET', '/api/v1/sync/status');
    expect(status.body).toMatchObject({ lastError: null, pending: { changes: 0 } });
  });
});
