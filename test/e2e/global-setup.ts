import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ADMIN = { username: 'admin', password: 'e2e-admin-password' };

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

function freePort(): Promise<number> {
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

/** Starts the built server (`out/server/cli.js serve`, as `npm run serve` does) on a free port and a temporary data directory; returns the teardown. */
export default async function globalSetup(): Promise<() => Promise<void>> {
  if (!existsSync(join(repoRoot, 'out/renderer/index.html'))) {
    throw new Error(
      'The renderer is not built: run `npm run build:renderer` (or `npm run test:e2e`).',
    );
  }
  if (!existsSync(join(repoRoot, 'out/server/cli.js'))) {
    throw new Error('The server is not built: run `npm run build:server` (or `npm run test:e2e`).');
  }
  const dataDir = await mkdtemp(join(tmpdir(), 'portfolio-e2e-'));
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
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
      join(dataDir, 'data'),
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
      },
    },
  );
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));

  try {
    await waitForServer(baseUrl, child, () => output);
  } catch (error) {
    await stop(child);
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  process.env.E2E_BASE_URL = baseUrl;

  return async () => {
    await stop(child);
    await rm(dataDir, { recursive: true, force: true });
    if (process.env.E2E_SHOW_SERVER_LOG) console.log(output);
  };
}
