import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killRunningClis } from '../helpers/cli-process';
import { fixtures } from '../helpers/file-fixtures';
import {
  connect,
  portfolioBody,
  removeDir,
  startHubAndReplica,
  syncNow,
  type Node,
  createPortfolio as create,
  editPortfolio as edit,
} from './two-process';

/**
 * History travels (DESIGN §10, §11; issue 25, point 7): a library that joins an empty hub keeps
 * its portfolios' history, and the hub keeps the same. Two real server processes over HTTP.
 */
describe('joining a hub keeps history, two processes', () => {
  let hub: Node;
  let replica: Node;
  const dirs: string[] = [];

  beforeAll(async () => {
    ({ hub, replica } = await startHubAndReplica(dirs));
  }, 120_000);
  afterAll(async () => {
    await killRunningClis();
    for (const dir of dirs) await removeDir(dir);
  });

  async function history(node: Node, id: string) {
    const response = await node.request('GET', `/api/v1/portfolio/${id}/revisions?pageSize=100`);
    expect(response.status, `${node.name} ${JSON.stringify(response.body)}`).toBe(200);
    return response.body as {
      total: number;
      revisions: Array<{
        revision: number;
        modifiedBy: string;
        command: string;
        changedFields: string[];
      }>;
    };
  }

  it('13 revisions and a file, joined to an empty hub: the same history and creation on both', async () => {
    const id = await create(replica, { projectTitle: 'Revision 1' });
    const cover = await fixtures.jpeg(40, 30);
    const put = await replica.request('PUT', `/api/v1/portfolio/${id}/cover`, {
      originalFilename: 'cover.jpg',
      data: cover.toString('base64'),
    });
    expect(put.status).toBe(200);
    for (let n = 3; n <= 13; n++) await edit(replica, id, { projectTitle: `Revision ${n}` });
    const before = await history(replica, id);
    expect(before.total).toBe(13);
    const made = (await replica.request('GET', `/api/v1/portfolio/${id}`)).body;
    expect(made.revision).toBe(13);

    await connect(replica, hub);
    await syncNow(replica);
    await syncNow(replica);

    const summary = (h: Awaited<ReturnType<typeof history>>) =>
      h.revisions.map(({ revision, modifiedBy, command, changedFields }) => ({
        revision,
        modifiedBy,
        command,
        changedFields,
      }));
    const onHub = await history(hub, id);
    const onReplica = await history(replica, id);
    expect(onHub.total).toBe(13);
    expect(onReplica.total).toBe(13);
    expect(summary(onReplica)).toEqual(summary(before));
    expect(summary(onHub)).toEqual(summary(before));
    expect(summary(onHub).find((entry) => entry.changedFields.includes('cover'))).toBeTruthy();

    for (const node of [hub, replica]) {
      const detail = (await node.request('GET', `/api/v1/portfolio/${id}`)).body;
      expect(detail.createdDate, node.name).toBe(made.createdDate);
      expect(detail.createdBy, node.name).toBe(made.createdBy);
      expect(detail.projectTitle, node.name).toBe('Revision 13');
      expect(detail.revision, node.name).toBe(13);
      expect(detail.cover.sha256 ?? detail.cover.fileId, node.name).toBeTruthy();
    }
    // An older revision's record came along whole, its file built from the bytes on the hub.
    const second = await hub.request('GET', `/api/v1/portfolio/${id}/revisions/2`);
    expect(second.status).toBe(200);
    expect(JSON.stringify(second.body)).toContain('cover.jpg');
  });

  describe('a hostile create over HTTP is refused whole', () => {
    function createWithHistory(id: string, change: (history: Record<string, unknown>) => void) {
      const fields = { ...portfolioBody({ projectTitle: 'hostile' }), portfolioId: id };
      const older = (revision: number) => ({
        revision,
        modifiedTime: 1_000 + revision,
        modifiedBy: 'admin',
        command: revision === 1 ? 'create' : 'save',
        changedFields: ['projectTitle'],
        fields: { ...fields, projectTitle: `old ${revision}` },
      });
      const history: Record<string, unknown> = {
        createdTime: 1_000,
        createdBy: 'admin',
        revision: 4,
        modifiedTime: 2_000,
        modifiedBy: 'admin',
        command: 'save',
        changedFields: ['projectTitle'],
        revisions: [older(1), older(2), older(3)],
      };
      change(history);
      return {
        replicaId: 'hostile-replica',
        mutations: [
          {
            mutationId: `m-${id}`,
            portfolioId: id,
            baseRevision: 0,
            op: 'create',
            fields,
            files: [],
            history,
          },
        ],
      };
    }

    const cases: Array<[string, (history: Record<string, unknown>) => void, RegExp]> = [
      ['revisions out of order', (h) => (h.revisions as unknown[]).reverse(), /out of order/],
      [
        'a revision newer than the record',
        (h) => ((h.revisions as Array<{ revision: number }>)[2]!.revision = 9),
        /not older than/,
      ],
      ['an author of 10 kB', (h) => (h.createdBy = 'x'.repeat(10_000)), /author/i],
      ['malformed', (h) => (h.revisions = 'not a list'), /history/],
    ];

    it.each(cases)('%s', async (name, change, words) => {
      const id = `hostile-${name.replace(/[^a-z0-9]+/g, '-')}`;
      const response = await hub.request(
        'POST',
        '/api/v1/sync/mutations',
        createWithHistory(id, change),
      );
      expect(response.status).toBe(200);
      const [result] = response.body.results;
      expect(result).toMatchObject({ status: 'rejected', revision: 0 });
      expect(result.error.code).toBe('VALIDATION_FAILED');
      expect(`${result.error.message} ${JSON.stringify(result.error.details)}`).toMatch(words);
      expect(result.error.message.length).toBeLessThan(300);
      expect((await hub.request('GET', `/api/v1/portfolio/${id}`)).status).toBe(404);
      expect((await hub.request('GET', `/api/v1/portfolio/${id}/revisions`)).status).toBe(404);
    });

    it('a sound history over HTTP is kept as given', async () => {
      const id = 'sound-history';
      const response = await hub.request(
        'POST',
        '/api/v1/sync/mutations',
        createWithHistory(id, () => {}),
      );
      expect(response.body.results[0]).toMatchObject({ status: 'applied', revision: 4 });
      const kept = await history(hub, id);
      expect(kept.revisions.map((entry) => entry.revision)).toEqual([4, 3, 2, 1]);
      const detail = (await hub.request('GET', `/api/v1/portfolio/${id}`)).body;
      expect(detail.createdDate).toBe(1_000);
    });
  });
});
