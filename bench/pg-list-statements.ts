/**
 * Variants of the list's statement, A/B'd in turns in process (issue 15): each variant runs the
 * list workload's first pages (bench/list-workload.ts, with their `field` selections) as prepared
 * statements on a connection of its own with generic plans (as the list pool runs them), and the
 * page is decoded as the repository does (listPage). Reported per list: the CPU of that
 * connection's backend (from /proc) and of this process, rounds alternating which goes first.
 *
 *   npx tsx bench/pg-list-statements.ts --database postgres://…/db [--requests 1500] [--rounds 4]
 *     [--variants current,array]
 *
 * The database must hold the bench's portfolios (bench/seed.ts seedPostgres). Variants rewrite
 * the text listStatement makes (see VARIANTS); `current` is it as it is.
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { ListedKey, ListRequest } from '../server/repositories/portfolio-repository-contract';
import { listPage, listStatement } from '../server/storage/postgres/list-sql';
import { listRequestOf, listWorkload } from './list-workload';
import { makePortfolios } from './seed';
import { processCpu } from './server-process';

const { values: args } = parseArgs({
  options: {
    database: { type: 'string' },
    requests: { type: 'string', default: '1500' },
    rounds: { type: 'string', default: '4' },
    size: { type: 'string', default: '100000' },
    variants: { type: 'string', default: 'current,no-total' },
  },
});
if (!args.database) throw new Error('--database postgres://… is required');

/** Rewrites of the statement text: what each would save, measured before it is written for real. */
const VARIANTS: Record<string, (text: string) => string> = {
  current: (text) => text,
  // The total read as a constant: what reading it costs.
  'no-total': (text) =>
    text.replace(
      /SELECT library\.seq, [\s\S]*? AS total, \(/,
      'SELECT library.seq, 0::bigint AS total, (',
    ),
  // The page's order left to the subquery (not guaranteed by PostgreSQL: only to measure the sort).
  'no-agg-order': (text) =>
    text.replace(/(json_agg\(json_build_array\([^)]*\)) ORDER BY [^)]*\)/, '$1)'),
  // The page as an array of the rows in the subquery's order, which the planner knows is sorted.
  array: (text) =>
    text.replace(
      /\(\s*SELECT json_agg\(json_build_array\(([^)]*)\) ORDER BY ([^)]*)\)::text\s*FROM \(([\s\S]*)\) page\s*\) AS page/,
      'array_to_json(ARRAY(SELECT json_build_array($1) FROM ($3) page ORDER BY $2))::text AS page',
    ),
  // Measures only (other answers): an array per key, each made by one json_agg (which looks up
  // how to write its type once, where json_build_array does for every value of every row).
  columns: (text) =>
    text.replace(
      /json_agg\(json_build_array\(([^)]*)\) ORDER BY [^)]*\)/,
      (_all, cells: string) =>
        `json_build_array(${cells
          .split(', ')
          .map((cell) => `json_agg(${cell})`)
          .join(', ')})`,
    ),
  // Measures only (other answers): each row's cells as text, written by one array_to_json.
  'text-array': (text) =>
    text.replace(
      /json_build_array\(([^)]*)\)/,
      (_all, cells: string) =>
        `array_to_json(ARRAY[${cells
          .split(', ')
          .map((cell) => `${cell}::text`)
          .join(', ')}])`,
    ),
};
/** Variants whose answers are not the current ones (they measure a part). */
const MEASURES_ONLY = new Set(['no-total', 'columns', 'text-array']);
/** Variants whose page is not an array per match (only parsed, not decoded). */
const OTHER_SHAPE = new Set(['columns', 'text-array']);

/** A workload URL as the route reads it, with its `field` as the repository's fields hint. */
function requestOf(path: string): ListRequest<ListedKey> {
  const fields = new URL(path, 'http://bench').searchParams.get('field')?.split(',') as
    ListedKey[] | undefined;
  return { ...listRequestOf(path), fields };
}

const workload = listWorkload(makePortfolios(Number(args.size)));
const requests = Array.from({ length: Number(args.requests) }, () =>
  requestOf(workload.list().path),
).filter((request) => listStatement(request, undefined).generic);

interface Variant {
  name: string;
  rewrite: (text: string) => string;
  client: pg.Client;
  pid: number;
  names: Map<string, string>;
  rows: Array<{ db: number; node: number; wall: number }>;
}

async function open(name: string): Promise<Variant> {
  const rewrite = VARIANTS[name];
  if (!rewrite) throw new Error(`no variant ${name}: ${Object.keys(VARIANTS).join(', ')}`);
  const client = new pg.Client({
    connectionString: args.database,
    options: '-c plan_cache_mode=force_generic_plan',
  });
  await client.connect();
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  return { name, rewrite, client, pid, names: new Map(), rows: [] };
}

async function run(variant: Variant): Promise<void> {
  const startedDb = processCpu(variant.pid).total;
  const startedNode = process.cpuUsage();
  const started = performance.now();
  for (const request of requests) {
    const statement = listStatement(request, undefined);
    const text = variant.rewrite(statement.text);
    let name = variant.names.get(text);
    if (name === undefined) variant.names.set(text, (name = `v${variant.names.size}`));
    const { rows } = await variant.client.query({ name, text, values: statement.values });
    if (OTHER_SHAPE.has(variant.name)) JSON.parse(rows[0].page);
    else listPage(rows[0], request, statement.items);
  }
  const node = process.cpuUsage(startedNode);
  variant.rows.push({
    db: (processCpu(variant.pid).total - startedDb) / requests.length,
    node: (node.user + node.system) / 1000 / requests.length,
    wall: (performance.now() - started) / requests.length,
  });
}

const variants = await Promise.all(args.variants.split(',').map(open));
// Every variant's answers must be those of the current statement: the same pages, totals.
for (const request of requests.slice(0, 200)) {
  const statement = listStatement(request, undefined);
  const pages = await Promise.all(
    variants.map(async (variant) => {
      const { rows } = await variant.client.query(
        variant.rewrite(statement.text),
        statement.values,
      );
      return JSON.stringify(listPage(rows[0], request, statement.items));
    }),
  );
  for (const [index, page] of pages.entries())
    if (page !== pages[0] && !MEASURES_ONLY.has(variants[index]!.name))
      throw new Error(`${variants[index]!.name} answers differently`);
}
for (const variant of variants) await run(variant); // warm-up: plans, caches, JIT
for (const variant of variants) variant.rows.length = 0;
for (let round = 0; round < Number(args.rounds); round++) {
  const order = round % 2 === 0 ? variants : [...variants].reverse();
  for (const variant of order) {
    await run(variant);
    const row = variant.rows.at(-1)!;
    console.log(
      `round ${round} ${variant.name}: CPU per list database ${row.db.toFixed(3)} ms, node ` +
        `${row.node.toFixed(3)} ms, wall ${row.wall.toFixed(3)} ms`,
    );
  }
}
const median = (values: number[]) => {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
for (const variant of variants)
  console.log(
    `${variant.name} median of ${variant.rows.length} rounds × ${requests.length} lists: database ` +
      `${median(variant.rows.map((row) => row.db)).toFixed(3)} ms, node ` +
      `${median(variant.rows.map((row) => row.node)).toFixed(3)} ms`,
  );
for (const variant of variants) await variant.client.end();
