/**
 * npx tsx bench/profile-list.ts [--size N] [--kind list|search|mixed] [--seconds s]
 * Profiles the built server (node --cpu-prof) under one kind of the list workload, answer cache
 * off, and prints the functions with the most self time. Not part of `npm run bench`.
 * With `--database postgres://…/db` the server runs on that database, which must already hold
 * the bench's portfolios of `--size` (bench/seed.ts seedPostgres).
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { listWorkload, sendEach } from './list-workload';
import { makePortfolios, seedDataDir } from './seed';
import {
  ADMIN,
  buildServer,
  SERVE_COMMAND,
  signIn,
  startOurs,
  startProcess,
} from './server-process';

const { values: args } = parseArgs({
  options: {
    size: { type: 'string', default: '10000' },
    kind: { type: 'string', default: 'list' },
    seconds: { type: 'string', default: '5' },
    'no-build': { type: 'boolean', default: false },
    sequence: { type: 'string' },
    database: { type: 'string' },
  },
});
if (!args['no-build']) buildServer();
const tmp = await mkdtemp(join(tmpdir(), 'portfolio-profile-'));
const records = makePortfolios(Number(args.size));
const dataDir = join(tmp, 'data');
const onDatabase: Record<string, string> = args.database
  ? { PORTFOLIO_DATABASE_URL: args.database }
  : {};
if (!args.database) await seedDataDir(dataDir, records);
const warm = await startOurs(dataDir, onDatabase);
const sessionId = await signIn(warm.url);
await warm.stop();
const profDir = join(tmp, 'prof');
const { child, match, stop } = startProcess(
  ['--cpu-prof', '--cpu-prof-dir', profDir, ...SERVE_COMMAND, '--port', '0', '--data-dir', dataDir],
  {
    PORTFOLIO_ADMIN_USERNAME: ADMIN.username,
    PORTFOLIO_ADMIN_PASSWORD: ADMIN.password,
    PORTFOLIO_LOG_LEVEL: 'warn',
    PORTFOLIO_LIST_CACHE_MB: '0',
    ...onDatabase,
  },
  /API: +(http:\/\/\S+)\/api\/v1/,
);
const url = (await match)[1]!;
type Kind = 'list' | 'search' | 'mixed';
const run = async (seed: number, seconds: number, kind = args.kind as Kind) => {
  const workload = listWorkload(records, seed);
  const result = await autocannon({
    url,
    connections: 20,
    duration: seconds,
    headers: { authorization: sessionId },
    requests: sendEach(workload[kind]),
  });
  console.log(
    `${kind}: ${result.requests.average} req/s p50 ${result.latency.p50} p99 ${result.latency.p99} non2xx ${result.non2xx}`,
  );
};
if (args.sequence) {
  // e.g. mixed:2,search:1,list:5 — the phases of bench/run.ts, each with its own seed.
  for (const [at, phase] of args.sequence.split(',').entries()) {
    const [name, seconds] = phase.split(':');
    await run(
      at === args.sequence.split(',').length - 1 ? 7 : 99 + at,
      Number(seconds),
      name as Kind,
    );
  }
} else {
  await run(99, 2);
  await run(7, Number(args.seconds));
}
await stop();
void child;
const [file] = (await readdir(profDir)).filter((name) => name.endsWith('.cpuprofile'));
const text = await readFile(join(profDir, file!), 'utf8');
if (process.env.PROFILE_OUT) await writeFile(process.env.PROFILE_OUT, text);
const profile = JSON.parse(text) as {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    hitCount: number;
  }[];
};
const self = new Map<string, number>();
let total = 0;
for (const node of profile.nodes) {
  const frame = node.callFrame;
  const name = `${frame.functionName || '(anon)'} ${frame.url.split('/').slice(-2).join('/')}:${frame.lineNumber}`;
  self.set(name, (self.get(name) ?? 0) + node.hitCount);
  total += node.hitCount;
}
for (const [name, hits] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25))
  console.log(`${((100 * hits) / total).toFixed(1).padStart(5)}%  ${name}`);
await rm(tmp, { recursive: true, force: true });
