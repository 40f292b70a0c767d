/**
 * Our server as a child process, exactly as users run it: the last command of `npm run serve`
 * (node with its flags and the built out/server/cli.js), read from package.json so the two
 * cannot drift apart. Shared by bench/run.ts and bench/upload.ts.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const ADMIN = { username: 'bench', password: 'bench-password-1' };

export interface Server {
  child: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

/** What `npm run serve` does before it starts the server: build it from the current sources. */
export function buildServer(): void {
  const build = spawnSync('npm', ['run', 'build:server', '--silent'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (build.status !== 0) throw new Error('npm run build:server failed');
}

export function startProcess(command: string[], env: Record<string, string>, ready: RegExp) {
  const child = spawn(process.execPath, command, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const match = new Promise<RegExpMatchArray>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // never left running behind a failed run
      reject(new Error(`timed out:\n${output}`));
    }, 120_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const found = ready.exec(output);
      if (found) {
        clearTimeout(timer);
        resolve(found);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command.join(' ')} exited ${code}:\n${output}`));
    });
  });
  // A process stopped before it printed its ready line is not an error of the run.
  match.catch(() => {});
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      // A clean stop first; a process that does not end within 10 s is killed.
      const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      child.kill('SIGTERM');
    });
  return { child, match, stop };
}

/**
 * Our server exactly as users run it: the last command of `npm run serve` (node with its flags
 * and the built out/server/cli.js), read from package.json so the two cannot drift apart.
 */
export const SERVE_COMMAND = (() => {
  const scripts = (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts;
  const words = scripts.serve!.split('&&').at(-1)!.trim().split(/\s+/);
  if (words[0] !== 'node') throw new Error(`unexpected serve script: ${scripts.serve}`);
  return words.slice(1);
})();

export async function startOurs(
  dataDir: string,
  env: Record<string, string> = {},
): Promise<Server & { readyMs: number }> {
  const started = performance.now();
  const { child, match, stop } = startProcess(
    [...SERVE_COMMAND, '--port', '0', '--data-dir', dataDir],
    {
      PORTFOLIO_ADMIN_USERNAME: ADMIN.username,
      PORTFOLIO_ADMIN_PASSWORD: ADMIN.password,
      PORTFOLIO_LOG_LEVEL: 'warn',
      ...env,
    },
    /API: +(http:\/\/\S+)\/api\/v1/,
  );
  const url = (await match)[1]!;
  return { child, url, stop, readyMs: performance.now() - started };
}

/** Signs the bench admin in on a server started by `startOurs`; answers the session id. */
export async function signIn(url: string): Promise<string> {
  const response = await fetch(`${url}/api/v1/appauth`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ADMIN),
  });
  if (!response.ok) throw new Error(`sign-in failed: ${response.status}`);
  return ((await response.json()) as { sessionId: string }).sessionId;
}

/** Sends one request of a workload; answers its latency in ms, failing loudly on an error answer. */
export async function timed(
  url: string,
  headers: Record<string, string>,
  request: { method: string; path: string; body?: string },
): Promise<number> {
  const started = performance.now();
  const response = await fetch(url + request.path, {
    method: request.method,
    headers: request.body ? { ...headers, 'content-type': 'application/json' } : headers,
    body: request.body,
  });
  const body = await response.text();
  if (!response.ok) throw new Error(`${request.path}: ${response.status} ${body}`);
  return Number((performance.now() - started).toFixed(1));
}

/**
 * CPU time a process has used so far (every thread), in ms, in user mode and in the kernel, from
 * /proc (clock ticks of 10 ms): a cost per request that other work on the machine skews far less
 * than it skews throughput.
 */
export function processCpu(pid: number): { user: number; system: number; total: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const user = Number(fields[11]) * 10;
  const system = Number(fields[12]) * 10;
  return { user, system, total: user + system };
}
