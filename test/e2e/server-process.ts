import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ADMIN = { username: 'admin', password: 'e2e-admin-password' };

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

async function waitForServer(
  baseUrl: string,
  child: ChildProcess,
  log: () => string,
): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`The server exited early (${child.exitCode}):\n${log()}`);
    try {
      // Any HTTP answer (401 here) means the server is up.
      await fetch(`${baseUrl}/api/v1/appauth`);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  throw new Error(`The server did not start within 60 s:\n${log()}`);
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || !child.pid) return resolve();
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }, 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    try {
      // The server runs detached in its own process group: signal all of it.
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      resolve();
    }
  });
}

export interface ServerProcess {
  url: string;
  dataDir: string;
  log(): string;
  /** Stops the server (SIGTERM, then SIGKILL after 10 s) and removes its data directory. */
  close(): Promise<void>;
}

/**
 * The built server (`out/server/cli.js serve`, as `npm run serve` does) in its own process, on a
 * free loopback port and a temporary data directory, with ADMIN as its first admin.
 */
export async function startServerProcess(
  env: Record<string, string> = {},
  args: string[] = [],
): Promise<ServerProcess> {
  const root = await mkdtemp(join(tmpdir(), 'portfolio-e2e-'));
  const dataDir = join(root, 'data');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let output = '';
  const child = spawn(
    process.execPath,
    [
      '--enable-source-maps',
      'out/server/cli.js',
      'serve',
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--data-dir',
      dataDir,
      ...args,
    ],
    {
      cwd: repoRoot,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        PORTFOLIO_ADMIN_USERNAME: ADMIN.username,
        PORTFOLIO_ADMIN_PASSWORD: ADMIN.password,
        PORTFOLIO_LOG_LEVEL: 'warn',
        ...env,
      },
    },
  );
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const close = async () => {
    await stop(child);
    await rm(root, { recursive: true, force: true });
  };
  try {
    await waitForServer(url, child, () => output);
  } catch (error) {
    await close();
    throw error;
  }
  return { url, dataDir, log: () => output, close };
}
