import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { readSnapshotDocument } from '../../server/storage/embedded/snapshot-file';
import { SCHEMA_VERSION } from '../../server/storage/embedded/migrations';
import {
  embeddedStore,
  ADMIN,
  makeTempDir,
  portfolioBody,
  startTestServer,
} from '../helpers/test-server';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const COMPACT_MIN_BYTES = 16 * 1024;
const CYCLES = 3;
const WRITERS = 8;

interface Child {
  process: ChildProcess;
  url: string;
}

async function startChild(dataDir: string): Promise<Child> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'test/server/storage-crash-child.ts', dataDir, String(COMPACT_MIN_BYTES)],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no LISTENING line:\n${output}`)), 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /LISTENING (\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`child exited (${code}):\n${output}`)));
  });
  return { process: child, url };
}

function killHard(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

async function call(
  url: string,
  method: string,
  path: string,
  session: string | null,
  body?: unknown,
) {
  const response = await fetch(url + path, {
    method,
    headers: {
      ...(session ? { authorization: session } : {}),
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, body: (await response.json()) as any };
}

const journalSegments = async (dataDir: string) =>
  (await readdir(dataDir)).filter((name) => /^journal-\d+\.ndjson$/.test(name));

describe('crash safety: kill -9 during concurrent writes', () => {
  const children: ChildProcess[] = [];
  let dataDir = '';
  afterAll(async () => {
    await Promise.all(children.map(killHard));
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps every acknowledged write across several kills, segments and snapshots', async () => {
    dataDir = await makeTempDir('portfolio-crash-');
    /** portfolioId → the newest acknowledged revision and the projectDetail it carried. */
    const acknowledged = new Map<string, { revision: number; projectDetail: string }>();
    const segmentNames = new Set<string>();
    let snapshotsSeen = 0;

    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const child = await startChild(dataDir);
      children.push(child.process);
      const signIn = await call(child.url, 'POST', '/api/v1/appauth', null, ADMIN);
      expect(signIn.status).toBe(200);
      const session = signIn.body.sessionId as string;

      // Everything acknowledged before this start must be there, exactly as acknowledged.
      for (const [id, expected] of acknowledged) {
        const detail = await call(child.url, 'GET', `/api/v1/portfolio/${id}`, session);
        expect(detail.status, id).toBe(200);
        expect(detail.body.revision).toBeGreaterThanOrEqual(expected.revision);
        if (detail.body.revision === expected.revision)
          expect(detail.body.projectDetail).toBe(expected.projectDetail);
      }

      let killed = false;
      const target = 150 + cycle * 60;
      let acks = 0;
      const writer = async (lane: number) => {
        for (let step = 0; !killed; step++) {
          const id = `c${cycle}w${lane}n${step}`;
          // ~1.5 KB per record: the journal passes the snapshot threshold many times.
          const projectDetail = `${id} `.repeat(150);
          try {
            const created = await call(
              child.url,
              'POST',
              '/api/v1/portfolio',
              session,
              portfolioBody({ portfolioId: id, projectDetail }),
            );
            if (created.status !== 201) throw new Error(`create ${created.status}`);
            acknowledged.set(id, { revision: 1, projectDetail });
            const edited = `${projectDetail} edited`;
            const updated = await call(
              child.url,
              'PUT',
              `/api/v1/portfolio/${id}`,
              session,
              portfolioBody({ projectDetail: edited }),
            );
            if (updated.status !== 200) throw new Error(`update ${updated.status}`);
            acknowledged.set(id, { revision: 2, projectDetail: edited });
            acks += 2;
          } catch (error) {
            if (killed) return; // in flight at the kill: never acknowledged
            throw error;
          }
        }
      };
      const watcher = (async () => {
        while (!killed) {
          for (const name of await journalSegments(dataDir)) segmentNames.add(name);
          if (acks >= target) {
            killed = true;
            await killHard(child.process);
          }
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })();
      await Promise.all([...Array.from({ length: WRITERS }, (_, lane) => writer(lane)), watcher]);
      const generations = (await readdir(dataDir)).filter((name) =>
        /^db\.json(\.\d+)?$/.test(name),
      );
      snapshotsSeen = Math.max(snapshotsSeen, generations.length);
    }

    // The run spanned several journal segments, so kills fell across segment switches and
    // background snapshots, not only into one growing file.
    expect(segmentNames.size).toBeGreaterThanOrEqual(3);
    expect(snapshotsSeen).toBeGreaterThanOrEqual(2);
    expect(acknowledged.size).toBeGreaterThan(300);

    // Recovery in-process: every acknowledged write, and nothing twice.
    const server = await startTestServer({ dataDir });
    try {
      const seen: string[] = [];
      let token = '';
      do {
        const page = await server.request(
          'GET',
          `/api/v1/portfolio?pageSize=1000&field=portfolioId,revision${token ? `&pageToken=${token}` : ''}`,
        );
        expect(page.status).toBe(200);
        seen.push(...page.body.lists.map((item: { portfolioId: string }) => item.portfolioId));
        token = page.body.nextPageToken;
      } while (token);
      expect(new Set(seen).size).toBe(seen.length);
      const present = new Set(seen);
      expect([...acknowledged.keys()].filter((id) => !present.has(id))).toEqual([]);
      for (const [id, expected] of acknowledged) {
        const stored = (await server.app.portfolios.get(id))!;
        expect(stored.revision).toBeGreaterThanOrEqual(expected.revision);
        if (stored.revision === expected.revision)
          expect(stored.projectDetail).toBe(expected.projectDetail);
      }
      // On disk: the current snapshot is whole JSON, and no torn journal line survives.
      await embeddedStore(server.app).idle();
      const snapshot = (await readSnapshotDocument(join(dataDir, 'db.json'))) as any;
      expect(snapshot.version).toBe(SCHEMA_VERSION);
      for (const name of await journalSegments(dataDir)) {
        const text = await readFile(join(dataDir, name), 'utf8');
        if (text) expect(text.endsWith('\n')).toBe(true);
        for (const line of text.split('\n').filter(Boolean))
          expect(() => JSON.parse(line)).not.toThrow();
      }
    } finally {
      await server.stop();
    }
  }, 120_000);
});
