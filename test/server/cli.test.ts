import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { LOCK_FILE_NAME } from '../../server/storage/data-dir-lock';
import { killRunningClis, spawnCli, type CliProcess } from '../helpers/cli-process';
import { expectError } from '../helpers/error-body';
import { ADMIN, makeTempDir } from '../helpers/test-server';

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
      'PORTFOLIO_HISTORY',
      'PORTFOLIO_HISTORY_DAYS',
      'PORTFOLIO_HISTORY_KEEP',
      'PORTFOLIO_TRASH_DAYS',
    ],
    'users list': ['--data-dir', '--json', '--help', 'PORTFOLIO_DATA_DIR'],
    'users reset-password': [
      '<username>',
      '--data-dir',
      '--password-stdin',
      '--help',
      'PORTFOLIO_DATA_DIR',
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
    });
    const url = await cli.url();
    expect(cli.stdout()).toContain(`serving ${dataDir}`);
    await expect(readFile(join(dataDir, LOCK_FILE_NAME), 'utf8')).resolves.toContain(
      String(cli.child.pid),
    );
    expect(cli.stdout() + cli.stderr()).not.toContain(ADMIN.password);
    const signIn = await post(url, '/api/v1/appauth', {
      username: 'owner',
      password: ADMIN.password,
    });
    expect(signIn.status).toBe(200);

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
        `error: ${dir} holds no Portfolio Manager data; check --data-dir.`,
      );
    }
    expect(await readdir(empty)).toEqual([]);
  });
});
