/**
 * npm run bench:csv -- [--rows N] [--clients C]
 *
 * CSV import (DESIGN §16, issue 28 point 1) against its baseline, measured in the same run on
 * servers run as users run them (built, `npm run serve`'s command), each on an empty library:
 * - the baseline: the same N portfolios created one by one with `POST /api/v1/portfolio`, by C
 *   clients at once (default 20), as a script without the CSV import would;
 * - `POST /api/v1/import/csv?dryRun=true` of a CSV of those N rows (nothing written): target
 *   ≥ 10× faster than the baseline;
 * - `POST /api/v1/import/csv` of that CSV: target ≥ 3× faster than the baseline;
 * - the same CSV again (every row unchanged).
 * Results go to bench/results/<date>-csv-import-<rows>.json.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { buildServer, ROOT, signIn, startOurs, type Server } from './server-process';

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000' },
    clients: { type: 'string', default: '20' },
  },
});
const ROWS = Number(args.rows);
const CLIENTS = Number(args.clients);

const CATEGORIES = ['Interior', 'Garden', 'Furniture', 'Lighting', 'Textile'];

/** Row i of the import, as a create body. */
function body(i: number) {
  return {
    memberBarcode: `M${String(i % 997).padStart(4, '0')}`,
    category: CATEGORIES[i % CATEGORIES.length]!,
    projectTitle: `Project ${i}: a "quoted" title, with a comma`,
    projectDetail: `Detail of project ${i}.\nA second line.`,
    generalTag: ['wood', `tag${i % 50}`],
  };
}

const quote = (text: string) => `"${text.replace(/"/g, '""')}"`;

function csvOf(rows: number): string {
  const lines = ['Member barcode,Category,Project title,Project detail,Tags'];
  for (let i = 0; i < rows; i++) {
    const b = body(i);
    lines.push(
      [b.memberBarcode, b.category, b.projectTitle, b.projectDetail, b.generalTag.join('; ')]
        .map(quote)
        .join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}

async function oneByOne(url: string, session: string): Promise<number> {
  let next = 0;
  const started = performance.now();
  const client = async () => {
    for (let i = next++; i < ROWS; i = next++) {
      const response = await fetch(`${url}/api/v1/portfolio`, {
        method: 'POST',
        headers: { authorization: session, 'content-type': 'application/json' },
        body: JSON.stringify(body(i)),
      });
      await response.text();
      if (response.status !== 201) throw new Error(`create ${i}: ${response.status}`);
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  return performance.now() - started;
}

async function importCsv(url: string, session: string, csv: string, dryRun: boolean) {
  const started = performance.now();
  const response = await fetch(`${url}/api/v1/import/csv?dryRun=${dryRun}`, {
    method: 'POST',
    headers: { authorization: session, 'content-type': 'text/csv' },
    body: csv,
  });
  const text = await response.text();
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`import: ${response.status} ${text.slice(0, 300)}`);
  return { ms, counts: (JSON.parse(text) as { counts: Record<string, number> }).counts };
}

async function main() {
  const startLoad = loadavg();
  const work = await mkdtemp(join(tmpdir(), 'bench-csv-'));
  const servers: Server[] = [];
  try {
    buildServer();
    const csv = csvOf(ROWS);
    console.log(`${ROWS} rows, ${(Buffer.byteLength(csv) / 1e6).toFixed(1)} MB of CSV`);

    const baselineServer = await startOurs(join(work, 'baseline'));
    servers.push(baselineServer);
    console.log(`baseline: ${ROWS} POST /api/v1/portfolio by ${CLIENTS} clients…`);
    const baselineMs = await oneByOne(baselineServer.url, await signIn(baselineServer.url));
    console.log(`  ${baselineMs.toFixed(0)} ms`);
    await baselineServer.stop();

    const server = await startOurs(join(work, 'csv'));
    servers.push(server);
    const session = await signIn(server.url);
    console.log('CSV dry run…');
    const dry = await importCsv(server.url, session, csv, true);
    console.log(`  ${dry.ms.toFixed(0)} ms`, dry.counts);
    console.log('CSV import…');
    const real = await importCsv(server.url, session, csv, false);
    console.log(`  ${real.ms.toFixed(0)} ms`, real.counts);
    console.log('CSV import again (all unchanged)…');
    const again = await importCsv(server.url, session, csv, false);
    console.log(`  ${again.ms.toFixed(0)} ms`, again.counts);
    if (real.counts.create !== ROWS || again.counts.unchanged !== ROWS)
      throw new Error('the import did not create every row, or the retry changed something');

    const results = {
      date: new Date().toISOString(),
      rows: ROWS,
      clients: CLIENTS,
      loadavg: { start: startLoad, end: loadavg() },
      ms: {
        oneByOne: Math.round(baselineMs),
        dryRun: Math.round(dry.ms),
        import: Math.round(real.ms),
        importAgain: Math.round(again.ms),
      },
      ratios: {
        importFasterThanOneByOne: Number((baselineMs / real.ms).toFixed(2)),
        dryRunFasterThanOneByOne: Number((baselineMs / dry.ms).toFixed(2)),
      },
      targets: {} as Record<string, boolean>,
    };
    results.targets = {
      'import >= 3x faster than one by one': results.ratios.importFasterThanOneByOne >= 3,
      'dry run >= 10x faster than one by one': results.ratios.dryRunFasterThanOneByOne >= 10,
    };
    console.log(JSON.stringify(results.ratios, null, 2));
    for (const [name, pass] of Object.entries(results.targets))
      console.log(`${pass ? 'PASS' : 'FAIL'} ${name}`);
    const out = join(
      ROOT,
      'bench',
      'results',
      `${results.date.slice(0, 10)}-csv-import-${ROWS}.json`,
    );
    await writeFile(out, `${JSON.stringify(results, null, 2)}\n`);
    console.log(`wrote ${out}`);
  } finally {
    for (const server of servers) await server.stop();
    await rm(work, { recursive: true, force: true });
  }
}

await main();
