import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance } from 'fastify';
import { CSV_KEYS, fieldLabelOf, type CsvKey } from '../../shared';
import type { Caller } from '../services/portfolio-service';
import { ApiError } from '../errors';
import { DataDirInUseError } from '../storage/embedded/data-dir-lock';
import {
  CommandFailed,
  DATA_DIR_FLAG,
  EXIT,
  UsageError,
  print,
  type Command,
  type Flag,
} from './command';
import { requireLibrary } from './library-dir';

const DATABASE_FLAG: Flag = {
  name: 'database',
  value: '<url>',
  env: 'PORTFOLIO_DATABASE_URL',
  description: 'PostgreSQL, as "serve --database" takes it: postgres://user@host:5432/name',
};

/** The CLI acts for the library's owner: an admin named as jobs and migrations are. */
const SYSTEM: Caller = { username: 'system', role: 'admin', allowEdit: ['*'] };

const WHERE_NOTES =
  'With --data-dir: a data directory no server is using (stop the server or quit the desktop\n' +
  'app first; a running one exports from GET /api/v1/export and imports at POST /api/v1/import).\n' +
  'A folder that holds no library is refused and nothing is made in it.';

/**
 * The app over the deployment on the command line, not listening: the same services and the
 * same write path as a server's. Refuses a data directory that holds no library.
 */
async function withApp<T>(
  input: Parameters<Command['run']>[0],
  use: (app: FastifyInstance) => Promise<T>,
): Promise<T> {
  const database = input.option('database') || undefined;
  const dataDir = resolve(input.option('data-dir') ?? 'data');
  if (database === undefined) await requireLibrary(dataDir);
  const { buildApp } = await import('../app');
  const app = await buildApp({ dataDir, database, logger: false, sync: { intervalMs: 0 } }).catch(
    (error: unknown) => {
      if (error instanceof DataDirInUseError) throw new CommandFailed(error.message);
      throw error;
    },
  );
  try {
    return await use(app);
  } catch (error) {
    if (error instanceof ApiError) throw new CommandFailed(error.message);
    throw error;
  } finally {
    await app.close();
  }
}

/** `portfolio export`: the gallery's export, to a file (DESIGN §11, §14). */
export const exportCommand: Command = {
  name: 'export',
  summary: 'Export portfolios to a ZIP (with history and files) or a CSV.',
  flags: [
    DATA_DIR_FLAG,
    DATABASE_FLAG,
    { name: 'out', value: '<file>', description: 'where to write the export (required)' },
    { name: 'format', value: 'zip|csv', description: 'zip (default) or csv' },
    { name: 'filter', value: '<filter>', description: 'as the list takes it: "category:Art"' },
    { name: 'q', value: '<words>', description: 'full-text search, as the list takes it' },
    { name: 'order-by', value: '<keys>', description: 'as the list takes it: "projectTitle"' },
  ],
  notes: WHERE_NOTES,
  async run(input) {
    const out = input.option('out');
    if (!out) throw new UsageError('--out <file> is required');
    const format = input.option('format') ?? 'zip';
    if (format !== 'zip' && format !== 'csv') throw new UsageError('--format is zip or csv');
    const target = resolve(out);
    const partial = `${target}.partial`;
    return withApp(input, async (app) => {
      const { stream } = app.transferService.export(SYSTEM, {
        format,
        filter: input.option('filter'),
        q: input.option('q'),
        orderBy: input.option('order-by'),
      });
      // Written beside the target and renamed at the end: a failure never leaves half an export
      // under the name asked for.
      try {
        await pipeline(stream, createWriteStream(partial));
        await rename(partial, target);
      } catch (error) {
        await rm(partial, { force: true });
        throw error;
      }
      print(`Exported to ${target}`);
      return EXIT.ok;
    });
  },
};

/** `portfolio import FILE`: an export ZIP, or a CSV of rows, into this library (DESIGN §11, §16). */
export const importCommand: Command = {
  name: 'import',
  args: '<file>',
  summary:
    'Import an export ZIP (new portfolios created, others merged) or a CSV (a portfolio per row).',
  flags: [
    DATA_DIR_FLAG,
    DATABASE_FLAG,
    { name: 'dry-run', description: 'CSV: report what each row would do, change nothing' },
    {
      name: 'mapping',
      value: '<json>',
      description: 'CSV: columns to fields, {"Title":"projectTitle"}; default: by header name',
    },
    {
      name: 'key',
      value: '<key>',
      description: 'CSV: match rows by portfolioId or memberBarcode,projectTitle',
    },
  ],
  notes:
    `${WHERE_NOTES}\n` +
    'A bad ZIP (cut short, a name outside it, a file that is not what it is named by, too large,\n' +
    'from a newer version) is refused whole and nothing is written; exit status 1.\n' +
    'A file named *.csv is a CSV import (docs/API.md, "CSV import"): each row creates a portfolio\n' +
    'or updates the one its key names; list cells separate entries with ";". The report lists\n' +
    'each row refused, with why; a file that is not a readable CSV changes nothing; exit status 1.',
  async run(input) {
    const file = resolve(input.positionals[0]!);
    if (extname(file).toLowerCase() === '.csv') return importCsv(input, file);
    if (input.flag('dry-run') || input.option('mapping') || input.option('key'))
      throw new UsageError('--dry-run, --mapping and --key are for a .csv file');
    return withApp(input, async (app) => {
      const report = await app.transferService.import(SYSTEM, file);
      print(
        `Imported ${file}: created ${report.created}, unchanged ${report.unchanged}, ` +
          `merged ${report.merged}, conflicts ${report.conflicts}, refused ${report.refused.length}`,
      );
      for (const refused of report.refused)
        print(`  refused ${refused.portfolioId}: ${refused.reason}`);
      return EXIT.ok;
    });
  },
};

async function importCsv(input: Parameters<Command['run']>[0], file: string): Promise<number> {
  const key = input.option('key');
  if (key !== undefined && !(CSV_KEYS as readonly string[]).includes(key))
    throw new UsageError(`--key is ${CSV_KEYS.join(' or ')}`);
  const dryRun = input.flag('dry-run');
  return withApp(input, async (app) => {
    const service = app.csvImportService;
    const request = service.authorize(SYSTEM, {
      dryRun,
      mapping: input.option('mapping'),
      key: key as CsvKey | undefined,
    });
    const report = await service.run(SYSTEM, file, request);
    for (const row of report.rows) {
      const id = row.portfolioId ? ` ${row.portfolioId}` : '';
      const reasons = row.errors
        .map((error) => (error.field ? `${fieldLabelOf(error.field)}: ` : '') + error.message)
        .join('; ');
      print(`  row ${row.row}: ${row.action}${id}${reasons ? ` (${reasons})` : ''}`);
    }
    const { create, update, unchanged, refused } = report.counts;
    const verb = dryRun ? 'Dry run of' : 'Imported';
    const would = dryRun ? 'would ' : '';
    print(
      `${verb} ${file}: ${would}create ${create}, ${would}update ${update}, unchanged ${unchanged}, refused ${refused}`,
    );
    if (report.ignoredColumns.length > 0)
      print(`Columns not read: ${report.ignoredColumns.join(', ')}`);
    return EXIT.ok;
  });
}
