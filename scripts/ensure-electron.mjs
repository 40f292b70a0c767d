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
  const result = spawnSync(process.execPath, [require.resolve('electron/install.js')], {
    stdio: 'inherit',
  });
  if (result.status !== 0 || !electronPresent()) {
    console.error(
      'The Electron runtime could not be downloaded. The headless server needs no Electron: npm run serve',
    );
    process.exit(1);
  }
}
