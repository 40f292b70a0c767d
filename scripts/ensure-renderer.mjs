// `npm run serve` serves the built React UI; build it once on a fresh clone.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

if (!existsSync(new URL('../out/renderer/index.html', import.meta.url))) {
  console.log('Building the web UI once (out/renderer)…');
  const result = spawnSync(
    'npx',
    ['vite', 'build', '--config', 'renderer/vite.config.ts', '--logLevel', 'warn'],
    {
      stdio: 'inherit',
      cwd: new URL('..', import.meta.url),
    },
  );
  if (result.status !== 0) process.exit(result.status ?? 1);
}
