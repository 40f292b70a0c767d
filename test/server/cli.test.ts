import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { LOCK_FILE_NAME } from '../../server/storage/data-dir-lock';
import { killRunningClis, spawnCli } from '../helpers/cli-process';
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
  it('--help prints usage with every flag and environment variable, and exits 0', async () => {
    const cli = spawnCli(['--help']);
    const { code } = await cli.exited;
    expect(code).toBe(0);
    for (const text of [
      'Usage',
      '--host',
      '--port',
      '--data-dir',
      'PORTFOLIO_HOST',
      'PORTFOLIO_PORT',
      'PORTFOLIO_DATA_DIR',
      'PORTFOLIO_ADMIN_USERNAME',
      'PORTFOLIO_ADMIN_PASSWORD',
      'PORTFOLIO_LIST_CACHE_MB',
      'PORTFOLIO_HISTORY',
      'PORTFOLIO_HISTORY_DAYS',
      'PORTFOLIO_HISTORY_KEEP',
      'PORTFOLIO_TRASH_DAYS',
    ])
      expect(cli.stdout()).toContain(text);
  });

  it('exits non-zero on a bad --port, an unknown flag or an unknown command, touching nothing', async () => {
    const dataDir = join(await tempDir(), 'never-created');
    const cases: Array<[string[], Record<string, string>, string]> = [
      [['serve', '--port', 'abc'], {}, '--port must be 0..65535, not "abc"'],
      [['serve'], { PORTFOLIO_PORT: '70000' }, '--port must be 0..65535, not "70000"'],
      [['serve', '--bogus'], {}, "Unknown option '--bogus'"],
      [['launch'], {}, 'unknown command "launch"'],
      [
        ['serve'],
        { PORTFOLIO_LIST_CACHE_MB: 'lots' },
        'PORTFOLIO_LIST_CACHE_MB must be a number of megabytes, 0 or more, not "lots"',
      ],
      [
        ['serve'],
        { PORTFOLIO_HISTORY_DAYS: 'forever' },
        'PORTFOLIO_HISTORY_DAYS must be a whole number of days, 0 or more, not "forever"',
      ],
    ];
    const runs = cases.map(([args, env]) => spawnCli([...args, '--data-dir', dataDir], env));
    for (const [index, cli] of runs.entries()) {
      const [args, , message] = cases[index]!;
      const { code } = await cli.exited;
      expect(code, args.join(' ')).not.toBe(0);
      expect(cli.stderr(), args.join(' ')).toContain(message);
      expect(cli.stderr(), args.join(' ')).not.toMatch(/^\s+at /m); // no stack trace
    }
    await expect(readFile(join(dataDir, LOCK_FILE_NAME))).rejects.toThrow(/ENOENT/);
  });

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
    expect(code).not.toBe(0);
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
});
