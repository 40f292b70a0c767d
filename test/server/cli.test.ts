import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { LOCK_FILE_NAME } from '../../server/storage/embedded/data-dir-lock';
import { openDatabase } from '../../server/storage/postgres/database';
import { SCHEMA_VERSION } from '../../server/storage/postgres/migrations';
import { killRunningClis, spawnCli, type CliProcess } from '../helpers/cli-process';
import { expectError } from '../helpers/error-body';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../helpers/postgres';
import { ADMIN, makeTempDir, startTestServer, type TestServer } from '../helpers/test-server';

/** Child processes start slowly on a busy machine. */
const SPAWN_TIMEOUT = 60_000;
const dirs: string[] = [];
async function tempDir() {
  const dir = await makeTempDir('portfolio-cli-');
  dirs.push(dir);
  return dir;
}
afterEach(killRunningClis);
afterAll(async () => {
  await killRunningClis();
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function post(url: string, path: string, body: unknown) {
  const response = await fetch(url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

describe('headless CLI', { timeout: SPAWN_TIMEOUT }, () => {
  /** Every flag and environment variable of each command: what its --help must list. */
  const COMMAND_OPTIONS: Record<string, string[]> = {
    serve: [
      '--host',
      '--port',
      '--data-dir',
      '--database',
      '--help',
      'PORTFOLIO_HOST',
      'PORTFOLIO_PORT',
      'PORTFOLIO_DATA_DIR',
      'PORTFOLIO_DATABASE_URL',
      'PORTFOLIO_ADMIN_USERNAME',
      'PORTFOLIO_ADMIN_PASSWORD',
      'PORTFOLIO_LOG_LEVEL',
      'PORTFOLIO_LIST_CACHE_MB',
      'PORTFOLIO_INLINE_LIMIT_MB',
      'PORTFOLIO_IMPORT_LIMIT_MB',
      'PORTFOLIO_HISTORY',
      'PORTFOLIO_HISTORY_DAYS',
      'PORTFOLIO_HISTORY_KEEP',
      'PORTFOLIO_TRASH_DAYS',
      'PORTFOLIO_TRUST_PROXY',
    ],
    export: [
      '--data-dir',
      '--database',
      '--out',
      '--format',
      '--filter',
      '--q',
      '--order-by',
      '--help',
      'PORTFOLIO_DATA_DIR',
      'PORTFOLIO_DATABASE_URL',
    ],
    import: ['<file>', '--data-dir', '--database', '--help', 'PORTFOLIO_DATA_DIR'],
    'users list': [
      '--data-dir',
      '--database',
      '--json',
      '--help',
      'PORTFOLIO_DATA_DIR',
      'PORTFOLIO_DATABASE_URL',
    ],
    'users reset-password': [
      '<username>',
      '--data-dir',
      '--database',
      '--password-stdin',
      '--help',
      'PORTFOLIO_DATA_DIR',
      'PORTFOLIO_DATABASE_URL',
      'PORTFOLIO_NEW_PASSWORD',
    ],
  };

  it('--help, on the top level and on every command, lists every flag and variable; exit 0', async () => {
    const runs = [
      { args: ['--help'], commands: Object.keys(COMMAND_OPTIONS) },
      { args: ['-h'], commands: Object.keys(COMMAND_OPTIONS) },
      { args: ['users', '--help'], commands: ['users list', 'users reset-password'] },
      ...Object.keys(COMMAND_OPTIONS).map((name) => ({
        args: [...name.split(' '), '--help'],
        commands: [name],
      })),
    ].map((run) => ({ ...run, cli: spawnCli(run.args) }));
    for (const { args, commands, cli } of runs) {
      expect((await cli.exited).code, args.join(' ')).toBe(0);
      expect(cli.stdout(), args.join(' ')).toContain('Usage: portfolio ');
      for (const command of commands) {
        for (const text of COMMAND_OPTIONS[command]!)
          expect(cli.stdout(), args.join(' ')).toContain(text);
      }
    }
    expect(runs[0]!.cli.stdout()).toContain('users reset-password <username>');
    expect(runs[0]!.cli.stdout()).toMatch(/Exit status: 0 .*, 1 .*, 2 bad command line/);
  });

  it(
    'exits 2 with one line on a bad command line, touching nothing',
    { timeout: 180_000 },
    async () => {
      const dataDir = join(await tempDir(), 'never-created');
      const dir = ['--data-dir', dataDir];
      const cases: Array<[string[], Record<string, string>, string]> = [
        [[], {}, 'error: missing command (see: portfolio --help)'],
        [['launch', ...dir], {}, 'error: unknown command "launch" (see: portfolio --help)'],
        [[...dir, 'serve'], {}, 'error: a command comes first, not "--data-dir"'],
        [['serve', '--port', 'abc', ...dir], {}, '--port must be 0..65535, not "abc"'],
        [['serve', '--port', '0x10', ...dir], {}, '--port must be 0..65535, not "0x10"'],
        [['serve', ...dir], { PORTFOLIO_PORT: '70000' }, '--port must be 0..65535, not "70000"'],
        [
          ['serve', '--bogus', ...dir],
          {},
          "error: Unknown option '--bogus' (see: portfolio serve --help)",
        ],
        [['serve', ...dir, '--port'], {}, "Option '--port <value>' argument missing"],
        [['serve', 'extra', ...dir], {}, 'error: unexpected argument "extra"'],
        [
          ['serve', ...dir],
          { PORTFOLIO_LIST_CACHE_MB: 'lots' },
          'PORTFOLIO_LIST_CACHE_MB must be a number of megabytes, 0 or more, not "lots"',
        ],
        [
          ['serve', ...dir],
          { PORTFOLIO_HISTORY_DAYS: 'forever' },
          'PORTFOLIO_HISTORY_DAYS must be a whole number of days, 0 or more, not "forever"',
        ],
        [['serve', ...dir], { PORTFOLIO_INLINE_LIMIT_MB: 'many' }, 'PORTFOLIO_INLINE_LIMIT_MB'],
        [['users', ...dir], {}, 'error: missing users command (list or reset-password)'],
        [
          ['users', 'frob', ...dir],
          {},
          'error: unknown command "users frob" (see: portfolio users --help)',
        ],
        [['users', 'list', '--host', 'x', ...dir], {}, "error: Unknown option '--host'"],
        [
          ['users', 'reset-password', ...dir],
          {},
          'error: missing <username> (see: portfolio users reset-password --help)',
        ],
        [['users', 'reset-password', 'a', 'b', ...dir], {}, 'error: unexpected argument "b"'],
        [
          ['users', 'list', '--database', 'mysql://ann:hunter22@db/portfolio', ...dir],
          {},
          'error: --database must be a postgres:// URL (see: portfolio users list --help)',
        ],
        [
          ['users', 'reset-password', 'admin', ...dir],
          { PORTFOLIO_NEW_PASSWORD: 'short' },
          'error: the new password must be 8 to 1024 characters, not 5',
        ],
      ];
      const runs = cases.map(([args, env]) => spawnCli(args, env));
      for (const [index, cli] of runs.entries()) {
        const [args, , message] = cases[index]!;
        const { code } = await cli.exited;
        expect(code, args.join(' ')).toBe(2);
        expect(cli.stderr(), args.join(' ')).toContain(message);
        expect(cli.stderr().trimEnd().split('\n'), args.join(' ')).toHaveLength(1);
        expect(cli.stdout(), args.join(' ')).toBe('');
      }
      await expect(stat(dataDir)).rejects.toThrow(/ENOENT/);
    },
  );

  it('prints the URL and a generated admin password once, never in the log lines', async () => {
    const dataDir = await tempDir();
    const cli = spawnCli(['serve', '--port', '0', '--data-dir', dataDir]);
    const url = await cli.url();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(cli.stdout()).toContain(`UI:   ${url}/`);
    expect(cli.stdout()).toContain(`Docs: ${url}/docs`);
    const [, username, password] = cli.stdout().match(/username: (\S+)\n\s+password: (\S+)/)!;
    expect(username).toBe('admin');
    expect(password!.length).toBeGreaterThanOrEqual(16);

    // The password works.
    const signIn = await post(url, '/api/v1/appauth', { username, password });
    expect(signIn.status).toBe(200);
    const failed = await post(url, '/api/v1/appauth', { username, password: 'wrong-password' });
    expect(failed.status).toBe(401);

    cli.child.kill('SIGTERM');
    expect((await cli.exited).code).toBe(0);
    const output = cli.stdout() + cli.stderr();
    expect(output.split(password!).length - 1).toBe(1);
    const logLines = output.split('\n').filter((line) => line.startsWith('{'));
    expect(logLines.length).toBeGreaterThan(0); // structured log lines exist...
    for (const line of logLines) expect(line).not.toContain(password); // ...without the secret
    expect(output).not.toContain(signIn.body.sessionId);

    // A second start on the same data has users already: no password is generated or printed.
    const again = spawnCli(['serve', '--port', '0', '--data-dir', dataDir]);
    const againUrl = await again.url();
    expect(again.stdout()).not.toMatch(/password/i);
    expect((await post(againUrl, '/api/v1/appauth', { username, password })).status).toBe(200);
    again.child.kill('SIGTERM');
    expect((await again.exited).code).toBe(0);
  });

  it('takes host, port, data dir and the admin from PORTFOLIO_* and prints no password', async () => {
    const dataDir = await tempDir();
    const cli = spawnCli(['serve'], {
      PORTFOLIO_HOST: '127.0.0.1',
      PORTFOLIO_PORT: '0',
      PORTFOLIO_DATA_DIR: dataDir,
      PORTFOLIO_ADMIN_USERNAME: 'owner',
      PORTFOLIO_ADMIN_PASSWORD: ADMIN.password,
      PORTFOLIO_TRUST_PROXY: 'loopback',
    });
    const url = await cli.url();
    expect(cli.stdout()).toContain(`serving ${dataDir}`);
    // One line says the admin was made from the given password (without showing it).
    expect(cli.stdout()).toContain(
      'Created the first admin account "owner" with the password from PORTFOLIO_ADMIN_PASSWORD.',
    );
    await expect(readFile(join(dataDir, LOCK_FILE_NAME), 'utf8')).resolves.toContain(
      String(cli.child.pid),
    );
    expect(cli.stdout() + cli.stderr()).not.toContain(ADMIN.password);
    const signIn = await post(url, '/api/v1/appauth', {
      username: 'owner',
      password: ADMIN.password,
    });
    expect(signIn.status).toBe(200);
    // Behind the trusted (loopback) proxy, a browser that came over TLS gets a Secure cookie.
    const overTls = await fetch(`${url}/api/v1/appauth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-proto': 'https' },
      body: JSON.stringify({ username: 'owner', password: ADMIN.password }),
    });
    expect(overTls.headers.get('set-cookie')).toMatch(/; Secure/);

    // A second process on the same data directory is refused, and the first keeps serving.
    const lockBefore = await readFile(join(dataDir, LOCK_FILE_NAME), 'utf8');
    const second = spawnCli(['serve', '--port', '0', '--data-dir', dataDir], {
      PORTFOLIO_ADMIN_PASSWORD: ADMIN.password,
    });
    const { code } = await second.exited;
    expect(code).toBe(1);
    expect(second.stderr()).toMatch(/data directory .* is in use/);
    expect(second.stderr()).toContain(String(cli.child.pid));
    expect(second.stdout()).not.toContain('serving');
    expect(await readFile(join(dataDir, LOCK_FILE_NAME), 'utf8')).toBe(lockBefore);
    const me = await fetch(`${url}/api/v1/appauth`, {
      headers: { authorization: signIn.body.sessionId },
    });
    expect(me.status).toBe(200);

    // Loopback-only: a foreign Host header is refused.
    const foreign = await new Promise<{ status: number; body: any; headers: Headers }>(
      (resolve, reject) => {
        void import('node:http').then(({ request }) => {
          const target = new URL(url);
          request(
            {
              host: target.hostname,
              port: target.port,
              path: '/api/v1/appauth',
              headers: { host: 'evil.example' },
            },
            (res) => {
              let text = '';
              res.on('data', (chunk: Buffer) => (text += chunk.toString()));
              res.on('end', () =>
                resolve({
                  status: res.statusCode!,
                  body: JSON.parse(text),
                  headers: new Headers({ 'content-type': String(res.headers['content-type']) }),
                }),
              );
            },
          )
            .on('error', reject)
            .end();
        });
      },
    );
    expectError(foreign, 403, 'HOST_NOT_ALLOWED');

    cli.child.kill('SIGINT');
    expect((await cli.exited).code).toBe(0);
    await expect(readFile(join(dataDir, LOCK_FILE_NAME))).rejects.toThrow(/ENOENT/);
  });

  it('exits 1 with one line on a port already taken, and leaves the data directory unlocked', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = String((taken.address() as AddressInfo).port);
    try {
      const dataDir = join(await tempDir(), 'data');
      const cli = spawnCli(['serve', '--port', port, '--data-dir', dataDir], {
        PORTFOLIO_ADMIN_PASSWORD: ADMIN.password,
      });
      expect((await cli.exited).code).toBe(1);
      expect(cli.stderr()).toBe(
        `error: port ${port} on 127.0.0.1 is in use; choose another with --port\n`,
      );
      await expect(readFile(join(dataDir, LOCK_FILE_NAME))).rejects.toThrow(/ENOENT/);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});

describe('portfolio users', { timeout: SPAWN_TIMEOUT }, () => {
  const EDITOR = {
    username: 'ann',
    password: 'ann-password-1',
    role: 'editor',
    allowEdit: ['Ceramics'],
  };

  /** A data directory a server made: the admin, and an editor added over the API. */
  async function serverMadeDataDir(): Promise<{ dataDir: string; url: string; cli: CliProcess }> {
    const dataDir = await tempDir();
    const cli = spawnCli(['serve', '--port', '0', '--data-dir', dataDir], {
      PORTFOLIO_ADMIN_PASSWORD: ADMIN.password,
    });
    const url = await cli.url();
    const admin = await post(url, '/api/v1/appauth', ADMIN);
    const created = await fetch(`${url}/api/v1/users`, {
      method: 'POST',
      headers: { authorization: admin.body.sessionId, 'content-type': 'application/json' },
      body: JSON.stringify(EDITOR),
    });
    expect(created.status).toBe(201);
    return { dataDir, url, cli };
  }

  async function stop(cli: CliProcess) {
    cli.child.kill('SIGTERM');
    expect((await cli.exited).code).toBe(0);
  }

  async function run(args: string[], env: Record<string, string> = {}, stdin?: string) {
    const cli = spawnCli(args, env, stdin);
    const { code } = await cli.exited;
    return { code, stdout: cli.stdout(), stderr: cli.stderr() };
  }

  it('refuse a data directory a server holds, and change nothing', async () => {
    const { dataDir, url, cli } = await serverMadeDataDir();
    const lock = await readFile(join(dataDir, LOCK_FILE_NAME), 'utf8');
    const [list, reset] = await Promise.all([
      run(['users', 'list', '--data-dir', dataDir]),
      run(['users', 'reset-password', 'admin', '--data-dir', dataDir], {
        PORTFOLIO_NEW_PASSWORD: 'never-applied-pw',
      }),
    ]);
    for (const result of [list, reset]) {
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^error: The data directory .* is in use by .*\(pid \d+\)/);
      expect(result.stdout).toBe('');
    }
    expect(await readFile(join(dataDir, LOCK_FILE_NAME), 'utf8')).toBe(lock);
    expect((await post(url, '/api/v1/appauth', ADMIN)).status).toBe(200);
    await stop(cli);
  });

  it('list the accounts of a stopped data directory, as a table or JSON', async () => {
    const { dataDir, cli } = await serverMadeDataDir();
    await stop(cli);
    const table = await run(['users', 'list', '--data-dir', dataDir]);
    expect(table.code).toBe(0);
    expect(
      table.stdout
        .trimEnd()
        .split('\n')
        .map((line) => line.split(/\s{2,}/)),
    ).toEqual([
      ['USERNAME', 'ROLE', 'MAY EDIT'],
      ['admin', 'admin', '*'],
      ['ann', 'editor', 'Ceramics'],
    ]);
    expect(table.stdout).not.toContain('passwordHash');

    const json = await run(['users', 'list', '--json'], { PORTFOLIO_DATA_DIR: dataDir });
    expect(json.code).toBe(0);
    const users = JSON.parse(json.stdout) as Record<string, unknown>[];
    expect(users.map((user) => [user.username, user.role, user.allowEdit])).toEqual([
      ['admin', 'admin', ['*']],
      ['ann', 'editor', ['Ceramics']],
    ]);
    for (const user of users) expect(user).not.toHaveProperty('passwordHash');
    // The lock was released: a server starts on the folder again.
    const again = spawnCli(['serve', '--port', '0', '--data-dir', dataDir]);
    await again.url();
    await stop(again);
  });

  it(
    'reset a password (generated, from the environment or from stdin); sessions end',
    { timeout: 240_000 },
    async () => {
      const { dataDir, url, cli } = await serverMadeDataDir();
      const oldSession = (await post(url, '/api/v1/appauth', ADMIN)).body.sessionId as string;
      await stop(cli);

      const generated = await run(['users', 'reset-password', 'admin', '--data-dir', dataDir]);
      expect(generated.code).toBe(0);
      expect(generated.stdout).toContain(
        'The password of "admin" is reset; their sessions have ended.',
      );
      const password = generated.stdout.match(/New password \(shown only this once\): (\S+)/)![1]!;
      expect(password.length).toBeGreaterThanOrEqual(16);

      const fromEnv = await run(['users', 'reset-password', 'ann', '--data-dir', dataDir], {
        PORTFOLIO_NEW_PASSWORD: 'ann-from-environment',
      });
      expect(fromEnv.code).toBe(0);
      expect(fromEnv.stdout).not.toContain('New password');
      expect(fromEnv.stdout + fromEnv.stderr).not.toContain('ann-from-environment');

      const again = spawnCli(['serve', '--port', '0', '--data-dir', dataDir]);
      const againUrl = await again.url();
      const signIn = (username: string, secret: string) =>
        post(againUrl, '/api/v1/appauth', { username, password: secret });
      expect((await signIn('admin', ADMIN.password)).status).toBe(401);
      expect((await signIn('admin', password)).status).toBe(200);
      expect((await signIn('ann', EDITOR.password)).status).toBe(401);
      expect((await signIn('ann', 'ann-from-environment')).status).toBe(200);
      const old = await fetch(`${againUrl}/api/v1/appauth`, {
        headers: { authorization: oldSession },
      });
      expect(old.status).toBe(401);
      // Role and categories stay as they were.
      const me = await fetch(`${againUrl}/api/v1/appauth`, {
        headers: { authorization: (await signIn('ann', 'ann-from-environment')).body.sessionId },
      });
      expect(((await me.json()) as any).user).toEqual({
        username: 'ann',
        role: 'editor',
        allowEdit: ['Ceramics'],
      });
      await stop(again);

      // From standard input, without the line break a shell adds; it wins over the variable.
      const fromStdin = await run(
        ['users', 'reset-password', 'admin', '--password-stdin', '--data-dir', dataDir],
        { PORTFOLIO_NEW_PASSWORD: 'not-this-one-pw' },
        'typed at the terminal\n',
      );
      expect(fromStdin.code).toBe(0);
      const third = spawnCli(['serve', '--port', '0', '--data-dir', dataDir]);
      const thirdUrl = await third.url();
      const typed = await post(thirdUrl, '/api/v1/appauth', {
        username: 'admin',
        password: 'typed at the terminal',
      });
      expect(typed.status).toBe(200);
      await stop(third);
    },
  );

  it('fail clearly on an unknown user or a folder without data, creating nothing', async () => {
    const { dataDir, cli } = await serverMadeDataDir();
    await stop(cli);
    const unknown = await run(['users', 'reset-password', 'bob', '--data-dir', dataDir]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toBe('error: no user named "bob"; the users are: admin, ann');
    expect(unknown.stdout).toBe('');

    const empty = await tempDir();
    const missing = join(empty, 'typo');
    for (const dir of [empty, missing]) {
      const result = await run(['users', 'list', '--data-dir', dir]);
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toBe(
        `error: ${dir} holds no Portfolio Manager data; check --data-dir. Only "portfolio serve" creates a library.`,
      );
    }
    expect(await readdir(empty)).toEqual([]);
  });

  it('only serve creates a library: sync refuses an empty or missing folder, creating nothing', async () => {
    const empty = await tempDir();
    const missing = join(empty, 'typo');
    for (const args of [[], ['--hub', 'http://127.0.0.1:1']]) {
      for (const dir of [empty, missing]) {
        const result = await run(['sync', '--data-dir', dir, ...args], {
          PORTFOLIO_HUB_USERNAME: 'ann',
          PORTFOLIO_HUB_PASSWORD: 'ann-password',
        });
        expect(result.code, result.stderr).toBe(1);
        expect(result.stderr.trim()).toBe(
          `error: ${dir} holds no Portfolio Manager data; check --data-dir. Only "portfolio serve" creates a library.`,
        );
        expect(result.stdout).toBe('');
      }
    }
    // Nothing made: the empty folder stays empty, the missing one absent.
    expect(await readdir(empty)).toEqual([]);
  });
});

const PG_SUITE = 'portfolio users on PostgreSQL';
const pgUnavailable = await postgresUnavailable(PG_SUITE);

describe.skipIf(pgUnavailable)(PG_SUITE, { timeout: SPAWN_TIMEOUT }, () => {
  const databases: TestDatabase[] = [];
  const servers: TestServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await Promise.all(databases.map((database) => database.drop()));
  });

  async function database(): Promise<TestDatabase> {
    const made = await createTestDatabase();
    databases.push(made);
    return made;
  }

  /** A server on `url` (as `serve --database` runs it), kept running while the command runs. */
  async function server(url: string): Promise<TestServer> {
    const started = await startTestServer({ database: url });
    servers.push(started);
    return started;
  }

  async function run(args: string[], env: Record<string, string> = {}) {
    const cli = spawnCli(['users', ...args], env);
    const { code } = await cli.exited;
    return { code, stdout: cli.stdout(), stderr: cli.stderr() };
  }

  /** A port nothing listens on: taken from the system, then released. */
  async function closedPort(): Promise<number> {
    const probe = createServer();
    await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
    const { port } = probe.address() as AddressInfo;
    await new Promise((done) => probe.close(done));
    return port;
  }

  it('list the accounts while a server runs on the database, as a table or JSON', async () => {
    const { url } = await database();
    const running = await server(url);
    await running.userSession('ann', 'editor', ['Ceramics']);
    // --data-dir is not used on PostgreSQL: a folder that does not exist stays so.
    const unused = join(await tempDir(), 'not-used');

    const table = await run(['list', '--database', url, '--data-dir', unused]);
    expect(table.stderr).toBe('');
    expect(table.code).toBe(0);
    expect(
      table.stdout
        .trimEnd()
        .split('\n')
        .map((line) => line.split(/\s{2,}/)),
    ).toEqual([
      ['USERNAME', 'ROLE', 'MAY EDIT'],
      ['admin', 'admin', '*'],
      ['ann', 'editor', 'Ceramics'],
    ]);

    const json = await run(['list', '--json'], {
      PORTFOLIO_DATABASE_URL: url,
      PORTFOLIO_DATA_DIR: unused,
    });
    expect(json.code).toBe(0);
    const users = JSON.parse(json.stdout) as Record<string, unknown>[];
    expect(users.map((user) => [user.username, user.role, user.allowEdit])).toEqual([
      ['admin', 'admin', ['*']],
      ['ann', 'editor', ['Ceramics']],
    ]);
    for (const user of users) expect(user).not.toHaveProperty('passwordHash');
    await expect(stat(unused)).rejects.toThrow(/ENOENT/);
    // The server went on serving throughout.
    expect((await running.request('GET', '/api/v1/users')).status).toBe(200);
  });

  it(
    'reset a password while two instances run: sign in with it on either, old sessions end on both',
    { timeout: 180_000 },
    async () => {
      const { url } = await database();
      const first = await server(url);
      const second = await server(url);
      const annOnFirst = await first.userSession('ann', 'editor', ['Ceramics']);
      const annOnSecond = await second.signIn('ann', 'ann-password');
      const adminOnSecond = await second.signIn(ADMIN.username, ADMIN.password);

      const fromEnv = await run(['reset-password', 'ann', '--database', url], {
        PORTFOLIO_NEW_PASSWORD: 'ann-from-environment',
      });
      expect(fromEnv.stderr).toBe('');
      expect(fromEnv.code).toBe(0);
      expect(fromEnv.stdout).toBe('The password of "ann" is reset; their sessions have ended.\n');

      for (const [instance, session] of [
        [first, annOnFirst],
        [second, annOnSecond],
      ] as const) {
        const old = await instance.request('GET', '/api/v1/appauth', { session });
        expect(old.status).toBe(401);
        const signIn = (password: string) =>
          instance.request('POST', '/api/v1/appauth', {
            body: { username: 'ann', password },
            session: null,
          });
        expect((await signIn('ann-password')).status).toBe(401);
        const fresh = await signIn('ann-from-environment');
        expect(fresh.status).toBe(200);
        // Role and categories stay as they were.
        const me = await instance.request('GET', '/api/v1/appauth', {
          session: fresh.body.sessionId,
        });
        expect(me.body.user).toEqual({ username: 'ann', role: 'editor', allowEdit: ['Ceramics'] });
      }
      // Only ann's sessions ended.
      expect(
        (await second.request('GET', '/api/v1/appauth', { session: adminOnSecond })).status,
      ).toBe(200);

      // Generated and printed once; over real HTTP on a server started anew on the database.
      const generated = await run(['reset-password', 'admin'], { PORTFOLIO_DATABASE_URL: url });
      expect(generated.code).toBe(0);
      const password = generated.stdout.match(/New password \(shown only this once\): (\S+)/)![1]!;
      await Promise.all([first.stop(), second.stop()]);
      const { buildApp } = await import('../../server/app');
      const app = await buildApp({ dataDir: await tempDir(), database: url });
      try {
        const base = await app.listen({ host: '127.0.0.1', port: 0 });
        expect((await post(base, '/api/v1/appauth', ADMIN)).status).toBe(401);
        const signedIn = await post(base, '/api/v1/appauth', {
          username: 'admin',
          password,
        });
        expect(signedIn.status).toBe(200);
        expect(
          (
            await fetch(`${base}/api/v1/appauth`, {
              headers: { authorization: adminOnSecond },
            })
          ).status,
        ).toBe(401);
      } finally {
        await app.close();
      }

      // (A name that reads like a connection failure is still just an unknown user.)
      const unknown = await run(['reset-password', 'timeout', '--database', url]);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr.trim()).toBe(
        'error: no user named "timeout"; the users are: admin, ann',
      );
      expect(unknown.stdout).toBe('');
    },
  );

  it('exit 2 with one line naming host and port on an unreachable database, never the password', async () => {
    const port = await closedPort();
    const url = `postgres://ann:hunter22@127.0.0.1:${port}/portfolio`;
    const results = await Promise.all([
      run(['list', '--database', url]),
      run(['reset-password', 'admin'], {
        PORTFOLIO_DATABASE_URL: url,
        PORTFOLIO_NEW_PASSWORD: 'never-applied-pw',
      }),
    ]);
    for (const result of results) {
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        `error: Cannot connect to PostgreSQL at 127.0.0.1:${port}: connection refused (is PostgreSQL running and listening there?).\n`,
      );
      expect(result.stdout).toBe('');
    }
  });

  it('exit 1 on a database never set up, creating nothing in it', async () => {
    const empty = await database();
    const host = new URL(empty.url).host;
    const results = await Promise.all([
      run(['list', '--database', empty.url]),
      run(['reset-password', 'admin', '--database', empty.url], {
        PORTFOLIO_NEW_PASSWORD: 'never-applied-pw',
      }),
    ]);
    for (const result of results) {
      expect(result.code).toBe(1);
      expect(result.stderr.trimEnd().split('\n')).toEqual([
        `error: no Portfolio Manager database at ${host}/${empty.name} (it was never set up; ` +
          'nothing was created). Check --database, or set it up by starting ' +
          '"portfolio serve --database …".',
      ]);
      expect(result.stdout).toBe('');
    }
    const admin = new pg.Client({ connectionString: empty.url });
    await admin.connect();
    try {
      const { rows } = await admin.query(
        "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'",
      );
      expect(rows).toEqual([{ n: 0 }]);
    } finally {
      await admin.end();
    }
  });

  it('exit 2 with one line on a database of a newer schema, changing nothing', async () => {
    const { url } = await database();
    const opened = await openDatabase(url);
    const newer = SCHEMA_VERSION + 1;
    try {
      await opened.pool.query('INSERT INTO schema_migrations (name, run_on) VALUES ($1, now())', [
        `${String(newer).padStart(4, '0')}_from_the_future`,
      ]);
      const result = await run(['reset-password', 'admin', '--database', url], {
        PORTFOLIO_NEW_PASSWORD: 'never-applied-pw',
      });
      expect(result.code).toBe(2);
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(result.stderr).toContain(
        `has schema version ${newer}; this Portfolio Manager reads up to version ${SCHEMA_VERSION}`,
      );
      expect(result.stdout).toBe('');
      expect((await opened.pool.query('SELECT count(*)::int AS n FROM users')).rows).toEqual([
        { n: 0 },
      ]);
    } finally {
      await opened.close();
    }
  });
});
