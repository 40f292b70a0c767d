/**
 * A real server process for the crash test (not a test file itself): the app as the CLI builds
 * it, with a tiny snapshot threshold so that a short run spans several journal segments and
 * snapshots. Usage: node --import tsx test/server/storage-crash-child.ts <dataDir> <compactMinBytes>
 */
import { buildApp } from '../../server/app';
import { ADMIN, FAST_AUTH } from '../helpers/test-server';

const [dataDir, compactMinBytes] = process.argv.slice(2);
if (!dataDir || !compactMinBytes) throw new Error('usage: storage-crash-child <dataDir> <bytes>');
const app = await buildApp({
  dataDir,
  bootstrapAdmin: ADMIN,
  auth: FAST_AUTH,
  storage: { compactMinBytes: Number(compactMinBytes) },
});
const address = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`LISTENING ${address.replace('localhost', '127.0.0.1')}`);
