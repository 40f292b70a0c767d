import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import {
  type FILE_SLOTS,
  isStaff,
  type ExportQuery,
  type ExportedPortfolio,
  type ImportReport,
  type Mutation,
  type StoredFile,
} from '../../shared';
import { fileFromBlob, type FileFacts } from '../domain/portfolio-files';
import {
  listScope,
  parseFilter,
  parseOrderBy,
  parseSearch,
  type ListScope,
} from '../domain/list-query';
import { importedHistory } from '../domain/portfolio-transfer';
import { MERGED_FIELDS, sameValue } from '../domain/three-way-merge';
import { ApiError } from '../errors';
import { cleanFilename } from '../media/file-names';
import type {
  Cursor,
  ImportedRevision,
  ListPage,
  Page,
  PortfolioRepository,
  RevisionEntry,
  StoredPortfolio,
} from '../repositories/portfolio-repository-contract';
import {
  checkArchive,
  removeArchiveDir,
  type ArchiveLimits,
  type CheckedArchive,
} from '../transfer/import-archive';
import { csvExport, zipExport } from '../transfer/export-archive';
import type { Caller, PortfolioService } from './portfolio-service';
import type { SyncService } from './sync-service';
import { pdfCatalogue } from '../transfer/pdf-catalogue';

/** The blob store as export and import use it. */
export interface TransferBlobs {
  /** A folder on the blob store's disk, so an unpacked file becomes a blob by a rename. */
  tempDir: string;
  has(sha256: string): Promise<boolean>;
  readStream(sha256: string): Readable;
  adopt(path: string, sha256: string): Promise<() => void>;
  /** Removes those of these blobs that nothing references. */
  collect(sha256s: string[]): void;
}

export interface TransferServiceOptions {
  repository: PortfolioRepository;
  portfolios: PortfolioService;
  sync: SyncService;
  blobs: TransferBlobs;
  facts: (sha256: string, clientName: string) => Promise<FileFacts>;
  archive: ArchiveLimits;
  productVersion: string;
  now?: () => number;
}

/** Portfolios read from the repository per page of an export. */
const EXPORT_PAGE = 200;
/**
 * Portfolios imported at once. Eight keep a group commit full and the disk busy; more only grow
 * the memory an import holds (each portfolio's history is read whole).
 */
const IMPORT_CONCURRENCY = 8;
/** Kept revisions looked at, newest first, for the revision two libraries hold alike. */
const BASE_SEARCH = 100;

export type ExportFormat = 'zip' | 'csv' | 'pdf';

/**
 * Export and import of portfolios (DESIGN §11). Export reads what the caller may list, as the
 * list does, and streams it. Import checks the whole ZIP before it writes anything, then writes
 * each portfolio through the one write path: a new one through PortfolioService with its
 * history, one this library has through SyncService as a replica's update would be merged.
 */
export class TransferService {
  private readonly options: TransferServiceOptions;
  private readonly now: () => number;

  constructor(options: TransferServiceOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  // ---- Export ----

  /**
   * The export stream of what the caller may see, in the list's order and filter (and only the
   * `ids` given, if any). A bad parameter throws its 400 here, before any byte is sent.
   */
  export(user: Caller, query: ExportQuery): { format: ExportFormat; stream: Readable } {
    const search = parseSearch(query.q);
    const scope = listScope(
      parseOrderBy(query.orderBy, search !== null),
      parseFilter(query.filter, user.role),
      user.role === 'viewer',
      search,
    );
    const ids = query.ids ? new Set(query.ids.split(',').map((id) => id.trim())) : undefined;
    const pages = () => this.pages(scope, ids);
    const format: ExportFormat = query.format ?? 'zip';
    if (format === 'csv') return { format, stream: csvExport(pages()) };
    const { repository, blobs } = this.options;
    if (format === 'pdf') {
      const stream = pdfCatalogue({
        ids: async () => {
          const ids: string[] = [];
          for await (const page of pages()) for (const record of page) ids.push(record.portfolioId);
          return ids;
        },
        get: (portfolioId) => repository.get(portfolioId),
        blob: (sha256) => blobs.readStream(sha256),
        title: 'Portfolio catalogue',
        now: this.now(),
      });
      return { format, stream };
    }
    const stream = zipExport({
      pages,
      // History is for editors and admins (DESIGN §9): a viewer's export holds none.
      history: (portfolioId) =>
        isStaff(user) ? this.keptRevisions(portfolioId) : Promise.resolve([]),
      hasBlob: (sha256) => blobs.has(sha256),
      blob: (sha256) => blobs.readStream(sha256),
      libraryId: repository.libraryId,
      productVersion: this.options.productVersion,
      now: this.now(),
    });
    return { format, stream };
  }

  /**
   * The chosen portfolios a page at a time. The list answers records; each is read again as
   * stored (with its seq and authors), and one deleted since the page was read is left out.
   */
  private async *pages(
    scope: ListScope,
    ids: Set<string> | undefined,
  ): AsyncGenerator<StoredPortfolio[]> {
    const { repository } = this.options;
    let after: Cursor | null = null;
    do {
      const page: ListPage<'portfolioId'> = await repository.query({
        ...scope,
        after,
        limit: EXPORT_PAGE,
        fields: ['portfolioId'],
      });
      const chosen = page.items.filter((item) => !ids || ids.has(item.portfolioId));
      const stored = await Promise.all(chosen.map((item) => repository.get(item.portfolioId)));
      yield stored.filter((record) => record !== undefined);
      after = page.next;
    } while (after !== null);
  }

  private async keptRevisions(portfolioId: string): Promise<RevisionEntry[]> {
    const all: RevisionEntry[] = [];
    let cursor: string | null = null;
    do {
      const page: Page<RevisionEntry> = await this.options.repository.revisions(
        portfolioId,
        500,
        cursor,
      );
      all.push(...page.items);
      cursor = page.next;
    } while (cursor !== null);
    return all;
  }

  // ---- Import ----

  /** Role check made before the body is read (DESIGN §13). */
  authorizeImport(user: Caller): void {
    if (!isStaff(user)) {
      throw new ApiError(
        'FORBIDDEN',
        'Viewers cannot import; this needs the editor or admin role.',
      );
    }
  }

  /**
   * Imports the export ZIP at `zipPath` (DESIGN §11). A bad ZIP is refused whole (4xx) before
   * anything is written; then each portfolio is created, left alone, merged or refused, and the
   * answer says which.
   */
  async import(user: Caller, zipPath: string): Promise<ImportReport> {
    this.authorizeImport(user);
    const { blobs } = this.options;
    const dir = join(blobs.tempDir, `import-${randomBytes(8).toString('hex')}`);
    const releases: Array<() => void> = [];
    const adopted: string[] = [];
    let archive: CheckedArchive | undefined;
    try {
      archive = await checkArchive(zipPath, dir, this.options.archive);
      // Blobs are durable before any record refers to them (DESIGN §5); each is held until the
      // end, and whatever no portfolio came to use is collected then.
      for (const [sha256, path] of archive.blobs) {
        releases.push(await blobs.adopt(path, sha256));
        adopted.push(sha256);
      }
      const report: ImportReport = {
        created: 0,
        unchanged: 0,
        merged: 0,
        conflicts: 0,
        conflicted: [],
        refused: [],
      };
      // Several portfolios at once: each is still its own commit, but their durable writes
      // share a group commit (embedded) or the pool (PostgreSQL) instead of waiting in a row.
      // Outcomes are added to the report in the archive's order, whatever order they end in.
      const checked = archive;
      const outcomes = new Array<ImportOutcome>(checked.portfolios.length);
      let next = 0;
      let failed = false;
      const worker = async () => {
        while (next < checked.portfolios.length && !failed) {
          const index = next++;
          const entry = checked.portfolios[index]!;
          try {
            const exported = await checked.readPortfolio(entry);
            outcomes[index] = await this.importOne(user, exported, entry.sha256);
          } catch (error) {
            failed = true; // the others finish the portfolio they are at, then stop
            throw error;
          }
        }
      };
      const ended = await Promise.allSettled(Array.from({ length: IMPORT_CONCURRENCY }, worker));
      const failure = ended.find((result) => result.status === 'rejected');
      if (failure) throw failure.reason;
      for (const outcome of outcomes) addOutcome(report, outcome);
      return report;
    } finally {
      archive?.close();
      for (const release of releases) release();
      if (adopted.length > 0) blobs.collect(adopted);
      await removeArchiveDir(dir);
    }
  }

  private async importOne(
    user: Caller,
    exported: ExportedPortfolio,
    fileSha256: string,
  ): Promise<ImportOutcome> {
    const { repository } = this.options;
    const portfolioId = exported.portfolioId;
    try {
      const history = await this.withStoredFiles(importedHistory(exported));
      const current = history.at(-1)!.snapshot;
      const live = await repository.get(portfolioId);
      if (!live) {
        if (await repository.getTrashed(portfolioId)) {
          throw new ApiError(
            'ID_TAKEN',
            'This library has a portfolio with this id in its trash; restore or purge it, then import again.',
          );
        }
        await this.options.portfolios.insertImported(user, history);
        return { kind: 'created' };
      }
      if (MERGED_FIELDS.every((field) => sameValue(field, live[field], current[field]))) {
        return { kind: 'unchanged' };
      }
      const mutation: Mutation = {
        mutationId: `import-${fileSha256}`,
        portfolioId,
        op: 'update',
        baseRevision: await this.commonRevision(live, history),
        fields: Object.fromEntries(
          MERGED_FIELDS.map((field) => [field, pushed(field, current[field])]),
        ),
      } as Mutation;
      const result = await this.options.sync.applyImport(user, mutation);
      if (result.status === 'rejected') {
        return { kind: 'refused', portfolioId, reason: result.error?.message ?? 'Refused.' };
      }
      if (result.revision <= live.revision) return { kind: 'unchanged' };
      return { kind: 'merged', portfolioId, conflict: result.status === 'conflict' };
    } catch (error) {
      if (!(error instanceof ApiError) || error.statusCode >= 500) throw error;
      return { kind: 'refused', portfolioId, reason: error.message };
    }
  }

  /**
   * The newest revision this library keeps of the portfolio with the same content as the
   * import's revision of that number: the base a merge compares both sides to. None found: no
   * base, and every field that differs is a conflict (never overwritten silently).
   */
  private async commonRevision(
    live: StoredPortfolio,
    history: ImportedRevision[],
  ): Promise<number | undefined> {
    const candidates = history
      .filter((entry) => entry.revision <= live.revision)
      .reverse()
      .slice(0, BASE_SEARCH);
    for (const entry of candidates) {
      const local = await this.options.repository.revision(live.portfolioId, entry.revision);
      if (!local) continue;
      if (
        MERGED_FIELDS.every((field) =>
          sameValue(field, local.snapshot[field], entry.snapshot[field]),
        )
      )
        return entry.revision;
    }
    return undefined;
  }

  /**
   * Each file of each revision rebuilt from its blob's bytes (DESIGN §5: the server computes a
   * file's facts on every path it arrives by); its name, description and times are the export's.
   */
  private async withStoredFiles(history: ImportedRevision[]): Promise<ImportedRevision[]> {
    const now = this.now();
    const rebuilt = async (slot: (typeof FILE_SLOTS)[number], file: StoredFile) => {
      const originalFilename = cleanFilename(file.originalFilename);
      const facts = await this.options.facts(file.sha256, originalFilename).catch((error) => {
        if (error instanceof ApiError && error.code === 'BLOB_NOT_FOUND') {
          throw new ApiError(
            'BLOB_NOT_FOUND',
            `The file "${originalFilename}" is not in the ZIP (files/${file.sha256}).`,
          );
        }
        throw error;
      });
      return fileFromBlob(slot, { ...file, originalFilename }, facts, file, now);
    };
    const out: ImportedRevision[] = [];
    for (const entry of history) {
      const snapshot = { ...entry.snapshot };
      snapshot.cover = snapshot.cover && (await rebuilt('cover', snapshot.cover));
      for (const slot of ['draftingProcess', 'additionalDocument'] as const) {
        const files: StoredFile[] = [];
        for (const file of snapshot[slot]) files.push(await rebuilt(slot, file));
        snapshot[slot] = files;
      }
      out.push({ ...entry, snapshot });
    }
    return out;
  }
}

/** What importing one portfolio came to. */
type ImportOutcome =
  | { kind: 'created' | 'unchanged' }
  | { kind: 'merged'; portfolioId: string; conflict: boolean }
  | { kind: 'refused'; portfolioId: string; reason: string };

function addOutcome(report: ImportReport, outcome: ImportOutcome): void {
  switch (outcome.kind) {
    case 'created':
      report.created++;
      break;
    case 'unchanged':
      report.unchanged++;
      break;
    case 'merged':
      report.merged++;
      if (outcome.conflict) {
        report.conflicts++;
        report.conflicted.push(outcome.portfolioId);
      }
      break;
    case 'refused':
      report.refused.push({ portfolioId: outcome.portfolioId, reason: outcome.reason });
  }
}

/** A field as a mutation carries it: files by their blob, name and description only. */
function pushed(field: string, value: unknown): unknown {
  const ref = (file: StoredFile) => ({
    fileId: file.fileId,
    sha256: file.sha256,
    originalFilename: file.originalFilename,
    description: file.description,
  });
  if (field === 'cover') return value === null ? null : ref(value as StoredFile);
  if (field === 'draftingProcess' || field === 'additionalDocument')
    return (value as StoredFile[]).map(ref);
  return value;
}
