import {
  isStaff,
  type CsvImportReport,
  type CsvImportRow,
  type CsvKey,
  type FieldKey,
  type PortfolioRecord,
} from '../../shared';
import {
  createBodies,
  parseMapping,
  planColumns,
  recordKey,
  rowErrorsOf,
  rowKey,
  rowValues,
  updateBody,
  type ColumnPlan,
  type RequestedMapping,
  type RowError,
} from '../domain/csv-rows';
import { listScope, parseOrderBy } from '../domain/list-query';
import { ApiError } from '../errors';
import type {
  Cursor,
  ListPage,
  PortfolioRepository,
} from '../repositories/portfolio-repository-contract';
import { checkCsv, csvBatches, sniffCsv, type CsvRecord } from '../transfer/csv-reader';
import type { Caller, PortfolioService } from './portfolio-service';

/** Rows read, looked up and applied together. */
const BATCH_ROWS = 500;
/** Portfolios written at once: the store commits them together, as it does concurrent requests. */
const CONCURRENT_WRITES = 16;

/** What the caller asked for, checked before the body is read. */
export interface CsvImportRequest {
  dryRun: boolean;
  mapping: RequestedMapping | null;
  key: CsvKey | undefined;
}

type Values = Partial<Record<FieldKey, unknown>>;

/**
 * CSV import (DESIGN §16): each row creates a portfolio or updates the one its key names, through
 * PortfolioService (the same rights and validation as the API's; each write its own revision). A
 * dry run asks the service what each row would do and writes nothing. The file is checked whole
 * before the first row is written, so a broken file changes nothing.
 */
export class CsvImportService {
  constructor(
    private readonly repository: PortfolioRepository,
    private readonly portfolios: PortfolioService,
  ) {}

  /** Role and mapping checks made before the body is read (DESIGN §13). */
  authorize(
    user: Caller,
    query: { dryRun?: boolean; mapping?: string; key?: CsvKey },
  ): CsvImportRequest {
    if (!isStaff(user)) {
      throw new ApiError(
        'FORBIDDEN',
        'Viewers cannot import; this needs the editor or admin role.',
      );
    }
    return {
      dryRun: query.dryRun ?? false,
      mapping: parseMapping(query.mapping, user.role === 'admin'),
      key: query.key,
    };
  }

  /** Imports (or, dry, judges) the CSV at `path`. */
  async run(user: Caller, path: string, request: CsvImportRequest): Promise<CsvImportReport> {
    const { separator } = await sniffCsv(path);
    await checkCsv(path, separator);
    const report: CsvImportReport = {
      rows: [],
      counts: { create: 0, update: 0, unchanged: 0, refused: 0 },
      mapping: {},
      ignoredColumns: [],
      dryRun: request.dryRun,
    };
    let plan: ColumnPlan | undefined;
    /** Portfolios this run made or changed (or, dry, would have), by key: a later row sees them. */
    const touched = new Map<string, PortfolioRecord>();
    for await (const part of csvBatches(path, separator, BATCH_ROWS)) {
      if ('header' in part) {
        plan = planColumns(part.header, request.mapping, user.role === 'admin', request.key);
        report.mapping = plan.used;
        report.ignoredColumns = plan.ignored;
        continue;
      }
      const rows = await this.batch(user, plan!, part.batch, touched, request.dryRun);
      for (const row of rows) {
        report.rows.push(row);
        report.counts[row.action]++;
      }
    }
    return report;
  }

  private async batch(
    user: Caller,
    plan: ColumnPlan,
    records: CsvRecord[],
    touched: Map<string, PortfolioRecord>,
    dryRun: boolean,
  ): Promise<CsvImportRow[]> {
    const parsed = records.map((record) => {
      const { values, errors } = rowValues(record.cells, plan);
      return { row: record.row, values, errors, key: rowKey(values, plan.key) };
    });
    const found = await this.lookUp(
      plan.key,
      parsed.flatMap((entry) =>
        entry.key !== undefined && !touched.has(entry.key) ? [entry.values] : [],
      ),
    );
    // Rows of one key take turns, in file order; rows of different keys are written together.
    const byKey = new Map<string, typeof parsed>();
    parsed.forEach((entry, index) => {
      const group = entry.key ?? `row:${index}`;
      byKey.set(group, [...(byKey.get(group) ?? []), entry]);
    });
    const answers: CsvImportRow[] = [];
    const groups = [...byKey.entries()];
    const work = async () => {
      for (let next = groups.shift(); next; next = groups.shift()) {
        const [, entries] = next;
        for (const entry of entries) {
          const current =
            entry.key === undefined ? undefined : (touched.get(entry.key) ?? found.get(entry.key));
          const answer = await this.row(user, plan.key, entry, current, dryRun);
          if (answer.record && entry.key !== undefined) touched.set(entry.key, answer.record);
          answers.push(answer.row);
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENT_WRITES }, work));
    return answers.sort((a, b) => a.row - b.row);
  }

  /**
   * The live portfolios the rows' keys name, by key. Several for one barcode and title is an
   * ambiguity the row is refused for (`null`); a trashed id refuses a create of it.
   */
  private async lookUp(
    key: CsvKey,
    rows: Values[],
  ): Promise<Map<string, PortfolioRecord | null | 'trashed'>> {
    const found = new Map<string, PortfolioRecord | null | 'trashed'>();
    if (rows.length === 0) return found;
    if (key === 'portfolioId') {
      const ids = [...new Set(rows.map((values) => values.portfolioId as string))];
      await Promise.all(
        ids.map(async (id) => {
          const record = await this.repository.get(id);
          if (record) found.set(id, record);
          else if (await this.repository.getTrashed(id)) found.set(id, 'trashed');
        }),
      );
      return found;
    }
    const barcodes = [...new Set(rows.map((values) => values.memberBarcode as string))];
    const scope = listScope(
      parseOrderBy(undefined, false),
      new Map([['memberBarcode', barcodes]]),
      false,
    );
    let after: Cursor | null = null;
    do {
      // Whole records (no `fields`): each is the current state an update of it compares against.
      const page: ListPage = await this.repository.query({ ...scope, after, limit: 1000 });
      for (const record of page.items) {
        const k = recordKey(record, key);
        found.set(k, found.has(k) ? null : record);
      }
      after = page.next;
    } while (after !== null);
    return found;
  }

  /** One row: what it does (dry: would do), through the service's checks. */
  private async row(
    user: Caller,
    key: CsvKey,
    entry: { row: number; values: Values; errors: RowError[] },
    current: PortfolioRecord | null | 'trashed' | undefined,
    dryRun: boolean,
  ): Promise<{ row: CsvImportRow; record?: PortfolioRecord }> {
    const refused = (errors: RowError[], portfolioId?: string) => ({
      row: {
        row: entry.row,
        action: 'refused' as const,
        ...(portfolioId ? { portfolioId } : {}),
        errors,
      },
    });
    if (entry.errors.length > 0) return refused(entry.errors);
    if (key === 'portfolioId' && entry.values.portfolioId === undefined) {
      return refused([
        {
          field: 'portfolioId',
          message:
            'The portfolio id is empty: with the key portfolioId each row names its portfolio (or import with the key member barcode and project title).',
        },
      ]);
    }
    if (current === null) {
      return refused([
        {
          field: 'projectTitle',
          message:
            'Several portfolios have this member barcode and project title; import with the key portfolioId to say which.',
        },
      ]);
    }
    if (current === 'trashed') {
      return refused(
        [
          {
            field: 'portfolioId',
            message:
              'A portfolio with this id is in the trash; restore or purge it, then import again.',
          },
        ],
        entry.values.portfolioId as string,
      );
    }
    try {
      return current
        ? await this.update(user, entry.row, current, entry.values, dryRun)
        : await this.create(user, entry.row, entry.values, dryRun);
    } catch (error) {
      if (!(error instanceof ApiError) || error.statusCode >= 500) throw error;
      return refused(rowErrorsOf(error), current?.portfolioId);
    }
  }

  private async create(
    user: Caller,
    row: number,
    values: Values,
    dryRun: boolean,
  ): Promise<{ row: CsvImportRow; record: PortfolioRecord }> {
    const bodies = createBodies(values);
    const hasAdmin = Object.keys(bodies.admin).length > 0;
    // Both halves are judged before the first is written: a row is applied whole or not at all.
    const planned = this.portfolios.previewCreate(user, bodies.create);
    const finished = hasAdmin
      ? this.portfolios.previewUpdate(user, planned, updateBody(planned, bodies.admin)).next
      : planned;
    const answer = (record: PortfolioRecord) => ({
      row: { row, action: 'create' as const, portfolioId: record.portfolioId, errors: [] },
      record,
    });
    if (dryRun) {
      // A new portfolio's id is made when it is written; only a row's own id is known before.
      const { portfolioId, ...rest } = answer(finished).row;
      return { row: values.portfolioId ? { ...rest, portfolioId } : rest, record: finished };
    }
    let record: PortfolioRecord = await this.portfolios.create(user, bodies.create);
    if (hasAdmin) {
      record = await this.portfolios.update(user, record.portfolioId, {
        ...updateBody(record, bodies.admin),
        revision: record.revision,
      });
    }
    return answer(record);
  }

  private async update(
    user: Caller,
    row: number,
    current: PortfolioRecord,
    values: Values,
    dryRun: boolean,
  ): Promise<{ row: CsvImportRow; record: PortfolioRecord }> {
    const body = updateBody(current, values);
    const { next, changed } = this.portfolios.previewUpdate(user, current, body);
    const portfolioId = current.portfolioId;
    if (changed.length === 0) {
      return { row: { row, action: 'unchanged', portfolioId, errors: [] }, record: current };
    }
    const record = dryRun
      ? next
      : await this.portfolios.update(user, portfolioId, { ...body, revision: current.revision });
    return { row: { row, action: 'update', portfolioId, errors: [] }, record };
  }
}
