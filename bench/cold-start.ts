/**
 * Cold start (issue 14, point 4): process spawn to the first list answered, as `npm run bench`
 * measures it, without the rest of the bench. Seeds a data directory of `--size` portfolios once
 * (kept in the temp folder for later runs), signs in once, then starts the built server `--runs`
 * times and times each start. Several `--cli` builds are started in turn (A B A B ...), so that a
 * before/after comparison shares the moments of a shared machine.
 *
 *   npx tsx bench/cold-start.ts --size 100000 --runs 8
 *   npx tsx bench/cold-start.ts --cli out/server-before/cli.js --cli out/server/cli.js
 *   npx tsx bench/cold-start.ts --empty        # listening time with a new, empty data directory
 *
 * With several builds, each starts on its own copy of the seeded directory (made afresh each run),
 * since a build may rewrite the directory in a format an older one refuses (schema 3's snapshot
 * lines); the sign-in start before the timed ones lets each build migrate its copy untimed.
 *
 * Builds nothing: run `npm run build:server` first. For a "before", build the older code and copy
 * out/server to out/server-before: the `--cli` files must lie inside the project, so that their
 * packages resolve from its node_modules.
 */
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { CACHED_LIST_PATH } from './list-workload';
import { makePortfolios, seedDataDir } from './seed';
import { ADMIN, processCpu, ROOT, SERVE_COMMAND, signIn, startProcess } from './server-process';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '6' },
    cli: { type: 'string', multiple: true },
    'data-dir': { type: 'string' },
    empty: { type: 'boolean', default: false },
  },
});
const SIZE = Number(values.size);
const RUNS = Number(values.runs);
const DEFAULT_CLI = SERVE_COMMAND.find((word) => word.endsWith('.js'))!;
const CLIS = values.cli?.length ? values.cli : [DEFAULT_CLI];
const FLAGS = SERVE_COMMAND.slice(0, SERVE_COMMAND.indexOf(DEFAULT_CLI));
const ARGS = SERVE_COMMAND.slice(SERVE_COMMAND.indexOf(DEFAULT_CLI) + 1);
const ENV = {
  PORTFOLIO_ADMIN_USERNAME: ADMIN.username,
  PORTFOLIO_ADMIN_PASSWORD: ADMIN.password,
  PORTFOLIO_LOG_LEVEL: 'warn',
};

function start(cli: string, dataDir: string) {
  const started = performance.now();
  const server = startProcess(
    [...FLAGS, resolve(ROOT, cli), ...ARGS, '--port', '0', '--data-dir', dataDir],
    ENV,
    /API: +(http:\/\/\S+)\/api\/v1/,
  );
  return { ...server, started };
}

/**
 * One start: ms to listening and to the first list answered (null with `--empty`), and the CPU
 * the server used by then (less distorted by other work on the machine than the wall clock).
 */
async function coldStart(cli: string, dataDir: string, session: string | null) {
  const server = start(cli, dataDir);
  try {
    const url = (await server.match)[1]!;
    const listeningMs = performance.now() - server.started;
    const listeningCpuMs = processCpu(server.child.pid!).total;
    if (session === null) return { listeningMs, listeningCpuMs, firstListMs: null, cpuMs: null };
    for (;;) {
      const response = await fetch(url + CACHED_LIST_PATH, { headers: { authorization: session } });
      await response.arrayBuffer();
      if (response.ok) break;
      await new Promise((done) => setTimeout(done, 10));
    }
    const firstListMs = performance.now() - server.started;
    return { listeningMs, listeningCpuMs, firstListMs, cpuMs: processCpu(server.child.pid!).total };
  } finally {
    await server.stop();
  }
}

async function seededDataDir(): Promise<string> {
  const dataDir = values['data-dir'] ?? join(tmpdir(), `portfolio-cold-start-${SIZE}`);
  if (!existsSync(join(dataDir, 'db.json'))) {
    console.log(`seeding ${SIZE} portfolios into ${dataDir} ...`);
    rmSync(dataDir, { recursive: true, force: true });
    await seedDataDir(dataDir, makePortfolios(SIZE));
  }
  return dataDir;
}

async function signedIn(cli: string, dataDir: string): Promise<string> {
  const server = start(cli, dataDir);
  try {
    return await signIn((await server.match)[1]!);
  } finally {
    await server.stop();
  }
}

const median = (list: number[]) => {
  const sorted = [...list].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

const dataDir = values.empty ? null : await seededDataDir();
/** Each build's data directory (the seeded one itself with one build) and session in it. */
const dataDirs = new Map<string, { dir: string; session: string }>();
if (dataDir) {
  for (const [index, cli] of CLIS.entries()) {
    const dir: string = CLIS.length === 1 ? dataDir : `${dataDir}-build${index}`;
    if (dir !== dataDir) {
      rmSync(dir, { recursive: true, force: true });
      cpSync(dataDir, dir, { recursive: true });
    }
    dataDirs.set(cli, { dir, session: await signedIn(cli, dir) });
  }
}
interface Results {
  listeningMs: number[];
  listeningCpuMs: number[];
  firstListMs: number[];
  cpuMs: number[];
}
const results = new Map<string, Results>(
  CLIS.map((cli) => [cli, { listeningMs: [], listeningCpuMs: [], firstListMs: [], cpuMs: [] }]),
);
console.log(`load average at start: ${load()}`);
for (let run = 0; run < RUNS; run++) {
  for (const cli of run % 2 ? [...CLIS].reverse() : CLIS) {
    const seeded = dataDirs.get(cli);
    const dir = seeded?.dir ?? mkdtempSync(join(tmpdir(), 'portfolio-cold-empty-'));
    try {
      const timing = await coldStart(cli, dir, seeded?.session ?? null);
      const result = results.get(cli)!;
      result.listeningMs.push(timing.listeningMs);
      result.listeningCpuMs.push(timing.listeningCpuMs);
      if (timing.firstListMs !== null) result.firstListMs.push(timing.firstListMs);
      if (timing.cpuMs !== null) result.cpuMs.push(timing.cpuMs);
      console.log(
        `${cli}: listening ${timing.listeningMs.toFixed(0)} ms (CPU ${timing.listeningCpuMs} ms)` +
          (timing.firstListMs === null
            ? ''
            : `, first list ${timing.firstListMs.toFixed(0)} ms (CPU ${timing.cpuMs} ms)`),
      );
    } finally {
      if (!dataDir) rmSync(dir, { recursive: true, force: true });
    }
  }
}
console.log(`load average at end: ${load()}`);
const summary = (list: number[]) =>
  `median ${median(list).toFixed(0)} ms (${list.map((ms) => ms.toFixed(0)).join(' ')})`;
for (const [cli, result] of results) {
  const list = result.firstListMs.length
    ? `; first list ${summary(result.firstListMs)}, CPU ${summary(result.cpuMs)}`
    : '';
  console.log(
    `${cli} (${dataDir ? `${SIZE} portfolios` : 'empty data dir'}): listening ${summary(result.listeningMs)}, ` +
      `CPU ${summary(result.listeningCpuMs)}${list}`,
  );
}
