/**
 * A real process holding a data-directory lock, for data-dir-lock.test.ts (not a test file
 * itself). Prints "LOCKED <pid>" once it owns the lock; on SIGTERM it takes `shutdownMs` to
 * release it and exit, like a server finishing its writes.
 * Usage: node --import tsx test/server/data-dir-lock-child.ts <dataDir> [shutdownMs]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { acquireDataDirLock } from '../../server/storage/embedded/data-dir-lock';

const [dataDir, shutdownMs = '0'] = process.argv.slice(2);
if (!dataDir) throw new Error('usage: data-dir-lock-child <dataDir> [shutdownMs]');
const lock = await acquireDataDirLock(dataDir, { holderWaitMs: 0 });
const keepAlive = setInterval(() => {}, 60_000);
process.on('SIGTERM', () => {
  void sleep(Number(shutdownMs))
    .then(() => lock.release())
    .then(() => clearInterval(keepAlive));
});
console.log(`LOCKED ${process.pid}`);
