// package.json's allowScripts denies Electron's install script, so `npm install` never downloads
// the Electron runtime (and works behind a firewall that lets only the npm registry through). The desktop commands fetch it on first use instead; headless use and CI
// never need it.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

function electronPresent() {
  try {
    require('electron'); // throws when the runtime was not downloaded
    return true;
  } catch {
    return false;
  }
}

if (!electronPresent()) {
  console.log('Downloading the Electron runtime (first desktop start)…');
  // The installer's stderr is kept, not shown: a failed download prints a stack trace there,
  // and the one line below (with the reason, from the trace's first line) is what helps.
  const result = spawnSync(process.execPath, [require.resolve('electron/install.js')], {
    stdio: ['inherit', 'inherit', 'pipe'],
    encoding: 'utf8',
  });
  if (result.status !== 0 || !electronPresent()) {
    const reason = (result.stderr ?? '')
      .split('\n')
      .map((line) => line.trim())
      .find((line) => line && !line.startsWith('at '));
    console.error(
      `The Electron runtime could not be downloaded${reason ? ` (${reason})` : ''}. The headless server needs no Electron: npm run serve`,
    );
    process.exit(1);
  }
}
