import { once } from 'node:events';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { rm } from 'node:fs/promises';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { killRunningClis, spawnCli } from '../helpers/cli-process';
import {
  POSTGRES_URL,
  createTestDatabase,
  postgresUnavailable,
  type TestDatabase,
} from '../helpers/postgres';
import {
  ADMIN,
  makeTempDir,
  portfolioBody,
  startTestServer,
  type TestServer,
} from '../helpers/test-server';
import { SCHEMA_VERSION } from '../../server/storage/postgres/migrations';

/*
 * `portfolio serve --database`: an unusable database at start, the database lost and back while
 * serving, and a server killed with -9 in the middle of creates (real child processes, a real TCP
 * proxy in front of PostgreSQL).
 */
const unavailable = await postgresUnavailable('serve on PostgreSQL');

/** A TCP proxy to PostgreSQL that can be stopped (every connection cut) and started again. */
class PgProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  async start(): Promise<void> {
    const target = new URL(POSTGRES_URL);
    this.server = createServer((client) => {
      const upstream = connect(Number(target.port || 5432), target.hostname);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    this.server.listen(this.port, '127.0.0.1');
    await once(this.server, 'listening');
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const closed = new Promise((resolve) => this.server?.close(resolve));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  url(database: string): string {
    const url = new URL(POSTGRES_URL);
    url.host = `127.0.0.1:${this.port}`;
    url.pathname = `/${database}`;
    return url.toString();
  }
}

describe.skipIf(unavailable)('portfolio serve --database', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    await killRunningClis();
    while (cleanups.length > 0) await cleanups.pop()!().catch(() => {});
  });
  afterAll(killRunningClis);

  const database = async (): Promise<TestDatabase> => {
    const made = await createTestDatabase();
    cleanups.push(() => made.drop());
    return made;
  };
  const tempDir = async () => {
    const dir = await makeTempDir();
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    return dir;
  };

  it('an unreachable database: exit 2, one line naming host and port', async () => {
    // A port nothing listens on: a proxy started and stopped.
    const proxy = new PgProxy();
    await proxy.start();
    await proxy.stop();
    const cli = spawnCli([
      'serve',
      '--port',
      '0',
      '--data-dir',
      await tempDir(),
      '--database',
      proxy.url('nowhere'),
    ]);
    const { code } = await cli.exited;
    expect(code).toBe(2);
    const lines = cli.stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`127.0.0.1:${proxy.port}`);
    expect(lines[0]).toMatch(/connection refused/);
  });

  it('a database of a newer schema: exit 2, one line saying which version is needed', async () => {
    const made = await database();
    // A first start migrates it; then a newer release's migration is recorded.
    const first = await startTestServer({ database: made.url, dataDir: await tempDir() });
    await first.stop();
    const client = new pg.Client(made.url);
    await client.connect();
    const newer = SCHEMA_VERSION + 1;
    await client.query('INSERT INTO schema_migrations (name, run_on) VALUES ($1, now())', [
      `${String(newer).padStart(4, '0')}_from_the_future`,
    ]);
    await client.end();
    const cli = spawnCli(['serve', '--port', '0', '--data-dir', await tempDir()], {
      PORTFOLIO_DATABASE_URL: made.url,
    });
    expect((await cli.exited).code).toBe(2);
    const lines = cli.stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(`schema version ${newer}; .* reads up to version ${SCHEMA_VERSION}\\.`),
    );
  });

  it('the database lost while serving: 503 DATABASE_UNAVAILABLE, then it recovers by itself', async () => {
    const made = await database();
    const proxy = new PgProxy();
    await proxy.start();
    cleanups.push(() => proxy.stop());
    const server: TestServer = await startTestServer({
      database: proxy.url(made.name),
      dataDir: await tempDir(),
    });
    cleanups.push(() => server.stop());
    const created = await server.request('POST', '/api/v1/portfolio', { body: portfolioBody() });
    expect(created.status).toBe(201);
    const id = created.body.portfolioId;

    await proxy.stop();
    const read = await server.request('GET', `/api/v1/portfolio/${id}`);
    expect(read.status).toBe(503);
    expect(read.body).toEqual({
      result: 'error',
      statusCode: 503,
      error: 'Service Unavailable',
      code: 'DATABASE_UNAVAILABLE',
      message: 'The database cannot be reached; try again shortly.',
      details: [],
    });
    expect(read.headers.get('retry-after')).toBe('5');
    const write = await server.request('POST', '/api/v1/portfolio', { body: portfolioBody() });
    expect(write.status).toBe(503);
    const signIn = await server.request('POST', '/api/v1/appauth', { body: ADMIN, session: null });
    expect(signIn.status).toBe(503);

    await proxy.start(); // the same port again
    const again = await server.request('GET', `/api/v1/portfolio/${id}`);
    expect(again.status).toBe(200);
    expect(again.body.portfolioId).toBe(id);
    expect(
      (await server.request('POST', '/api/v1/portfolio', { body: portfolioBody() })).status,
    ).toBe(201);
  });

  it(
    'kill -9 of one instance during creates: every acknowledged create is readable on the other',
    { timeout: 120_000 },
    async () => {
      const made = await database();
      const dataDir = await tempDir();
      const env = { PORTFOLIO_ADMIN_PASSWORD: ADMIN.password, PORTFOLIO_LOG_LEVEL: 'warn' };
      const cli = spawnCli(
        ['serve', '--port', '0', '--data-dir', dataDir, '--database', made.url],
        env,
      );
      const url = await cli.url(60_000);
      const other = await startTestServer({ database: made.url, dataDir });
      cleanups.push(() => other.stop());
      const session = await other.signIn(ADMIN.username, ADMIN.password);

      const acknowledged: string[] = [];
      let killed = false;
      const writer = async (worker: number) => {
        for (let index = 0; !killed; index++) {
          try {
            const response = await fetch(`${url}/api/v1/portfolio`, {
              method: 'POST',
              headers: { authorization: session, 'content-type': 'application/json' },
              body: JSON.stringify(portfolioBody({ projectTitle: `W${worker} ${index}` })),
            });
            if (response.status === 201)
              acknowledged.push(((await response.json()) as { portfolioId: string }).portfolioId);
          } catch {
            return; // the connection died with the process
          }
        }
      };
      const writers = Array.from({ length: 6 }, (_, worker) => writer(worker));
      while (acknowledged.length < 40) await new Promise((resolve) => setTimeout(resolve, 20));
      cli.child.kill('SIGKILL');
      killed = true;
      expect((await cli.exited).signal).toBe('SIGKILL');
      await Promise.all(writers);

      expect(acknowledged.length).toBeGreaterThanOrEqual(40);
      for (const id of acknowledged) {
        const read = await other.request('GET', `/api/v1/portfolio/${id}`);
        expect(read.status, id).toBe(200);
      }
      const list = await other.request('GET', '/api/v1/portfolio?pageSize=1000&field=portfolioId');
      const listed = new Set(
        list.body.lists.map((item: { portfolioId: string }) => item.portfolioId),
      );
      for (const id of acknowledged) expect(listed.has(id), id).toBe(true);
    },
  );
});
