import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServerProcess } from './server-process';

export { ADMIN } from './server-process';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Starts the built server on a free port and a temporary data directory; returns the teardown. */
export default async function globalSetup(): Promise<() => Promise<void>> {
  if (!existsSync(join(repoRoot, 'out/renderer/index.html'))) {
    throw new Error(
      'The renderer is not built: run `npm run build:renderer` (or `npm run test:e2e`).',
    );
  }
  if (!existsSync(join(repoRoot, 'out/server/cli.js'))) {
    throw new Error('The server is not built: run `npm run build:server` (or `npm run test:e2e`).');
  }
  const server = await startServerProcess();
  process.env.E2E_BASE_URL = server.url;

  return async () => {
    const log = server.log();
    await server.close();
    if (process.env.E2E_SHOW_SERVER_LOG) console.log(log);
  };
}
