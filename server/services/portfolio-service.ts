import { randomUUID } from 'node:crypto';
import {
  ConditionalBodySchema,
  CreatePortfolioBodySchema,
  IngestBodySchema,
  FileDescriptionBodySchema,
  FileOrderBodySchema,
  FilesDescriptionBodySchema,
  isStaff,
  isVisibleTo,
  fieldKeysWith,
  UpdatePortfolioBodySchema,
  type Actor,
  type FileSlot,
  type IngestResult,
  type PortfolioRecord,
  type StoredFile,
  type BulkSet,
  type Command,
  type TagChanges,
} from '../../shared';
import type { LimitOptions } from '../config';
import {
  assertAccepted,
  assertFileLists,
  assertRoom,
  fileFromBlob,
  filesOf,
  findFile,
  holds,
  withAddedFile,
  withAddedFiles,
  withChangedFile,
  withCoverFromDrafting,
  withDescribedFiles,
  withReorderedDrafting,
  withIngestedFiles,
  type FileFacts,
} from '../domain/portfolio-files';
import {
  assertMayChange,
  assertMayCreate,
  changedFields,
  expectedRevision,
  type Expected,
  type IfMatchRevision,
  newPortfolio,
  restoredPortfolio,
  undeletedPortfolio,
  updatedPortfolio,
} from '../domain/portfolio-rules';
import { ApiError } from '../errors';
import { DEFAULT_ORDER, listScope, type Cursor } from '../domain/list-query';
import { KeyedSerialQueue } from '../lib/keyed-serial-queue';
import { cleanFilename } from '../media/file-names';
import { tooLarge, type Received } from '../media/receive-file';
import {
  RevisionConflictError,
  type ChangeMeta,
  type ChangePage,
  type ImportedRevision,
  type ListPage,
  type Page,
  type PortfolioRepository,
  type RevisionEntry,
  type StoredPortfolio,
  type TrashEntry,
} from '../repositories/portfolio-repository-contract';
import { apiErrorOf, revisionConflict } from './repository-errors';
import { bodyValidator } from '../validation/body-validator';
import { PortfolioListing } from './portfolio-listing';
import type { PageTokens } from '../domain/page-token';

/** The signed-in user a use case acts for. */
export interface Caller extends Actor {
  username: string;
}

/** The blob store as the service uses it: adopt an upload's bytes, collect what nobody uses. */
export interface FileBlobs {
  adopt(tempPath: string, sha256: string, durable: Promise<void>): Promise<() => void>;
  /** Removes the blobs that nothing (live record, trash or kept revision) references any more. */
  collect(sha256s: string[]): void;
  /** Deletes a temp file that never became a blob. */
  discard(tempPath: string): Promise<void>;
  /** Keeps blobs from removal until the release (an ingest names blobs already stored). */
  hold?(sha256s: string[]): () => void;
}

/** A file received over HTTP into a temp file of the blob store, not adopted yet. */
export interface Upload extends Received {
  tempPath: string;
  originalFilename: string;
  description: string;
}

/** How the caller made a change conditional: the revision `If-Match` names (parsed by the route). */
export interface Condition {
  ifMatch?: IfMatchRevision;
}

export interface PortfolioServiceOptions {
  repository: PortfolioRepository;
  /** Signs the list's page tokens. */
  pageTokens: PageTokens;
  blobs: FileBlobs;
  limits: Pick<LimitOptions, 'filesPerList'> & Partial<Pick<LimitOptions, 'fileBytes'>>;
  /** What the server reads from a stored blob's bytes (media/blob-facts.ts); needed by ingest. */
  facts?: (sha256: string, clientName: string) => Promise<FileFacts>;
  now?: () => number;
}

const validateCreate = bodyValidator(CreatePortfolioBodySchema);
const validateUpdate = bodyValidator(UpdatePortfolioBodySchema);
const validateDescription = bodyValidator(FileDescriptionBodySchema);
const validateConditional = bodyValidator(ConditionalBodySchema);
const validateOrder = bodyValidator(FileOrderBodySchema);
const validateFilesDescription = bodyValidator(FilesDescriptionBodySchema);
const validateIngest = bodyValidator(IngestBodySchema);

/**
 * Unconditional changes re-read and retry when another change got in between the read and the
 * compare-and-set (the caller asked for last-write-wins); a bound keeps a hot record from
 * spinning a request for ever. Changes of one portfolio made through this service take turns
 * (`turns`), so only another process sharing the database can get in between: the bound is for
 * that, and can never turn a burst of PUTs to one portfolio into 409s nobody asked for.
 */
const MAX_ATTEMPTS = 8;

/** What one attempt of a change stores, and what it tells history. */
export interface Step {
  next: PortfolioRecord;
  command: string;
}

/**
 * Every portfolio use case (DESIGN §9): each checks role and category first, then validates the
 * body, then builds the next record with the pure domain functions and stores it with one
 * compare-and-set. HTTP never reaches in here, and storage errors leave as API errors from one
 * place (`apiErrorOf`).
 */
export class PortfolioService {
  private readonly repository: PortfolioRepository;
  private readonly blobs: FileBlobs;
  private readonly limits: PortfolioServiceOptions['limits'];
  private readonly facts: PortfolioServiceOptions['facts'];
  private readonly now: () => number;
  /** Read, build and compare-and-set of one portfolio's changes, one at a time. */
  private readonly turns = new KeyedSerialQueue();
  /** The list use case: what a caller sees, paged (DESIGN §4). */
  readonly listing: PortfolioListing;
  /** Told of each file stored by an upload, once its change is committed. */
  private readonly fileAddedListeners: Array<(slot: FileSlot, file: StoredFile) => void> = [];

  constructor(options: PortfolioServiceOptions) {
    this.repository = options.repository;
    this.listing = new PortfolioListing(options.repository, options.pageTokens);
    this.blobs = options.blobs;
    this.limits = options.limits;
    this.facts = options.facts;
    this.now = options.now ?? Date.now;
  }

  /**
   * Tells `listener` of each file an upload stores, after its change is committed (the showcase
   * prepares image derivatives then). A listener must neither throw nor make the upload wait.
   */
  onFileAdded(listener: (slot: FileSlot, file: StoredFile) => void): void {
    this.fileAddedListeners.push(listener);
  }

  get libraryId(): string {
    return this.repository.libraryId;
  }

  // ---- Reads ----

  /** The portfolio as the caller may see it; 404 when it does not exist for them. */
  async get(user: Caller, portfolioId: string): Promise<StoredPortfolio> {
    const record = await this.repository.get(portfolioId);
    if (!record || !isVisibleTo(user, record)) throw notFound(portfolioId);
    return record;
  }

  /** A file of a portfolio the caller sees. */
  async file(user: Caller, portfolioId: string, fileId: string) {
    return requireFile(await this.get(user, portfolioId), fileId);
  }

  async revisions(
    user: Caller,
    portfolioId: string,
    page: { pageSize: number; pageToken?: string | undefined },
  ): Promise<Page<RevisionEntry>> {
    assertStaff(user);
    await this.get(user, portfolioId);
    return this.repository
      .revisions(portfolioId, page.pageSize, page.pageToken || null)
      .catch(rethrow);
  }

  async revision(user: Caller, portfolioId: string, revision: number): Promise<RevisionEntry> {
    assertStaff(user);
    await this.get(user, portfolioId);
    const entry = await this.repository.revision(portfolioId, revision);
    if (!entry) {
      throw new ApiError(
        'REVISION_NOT_FOUND',
        `Portfolio "${portfolioId}" has no kept revision ${revision}.`,
      );
    }
    return entry;
  }

  async trash(
    user: Caller,
    page: { pageSize: number; pageToken?: string | undefined },
  ): Promise<Page<TrashEntry>> {
    assertStaff(user);
    return this.repository.listTrash(page.pageSize, page.pageToken || null).catch(rethrow);
  }

  async changes(user: Caller, since: number, limit: number): Promise<ChangePage> {
    assertStaff(user);
    return this.repository.changesSince(since, limit).catch(rethrow);
  }

  // ---- Authorization that needs no body ----

  /** Role-only check of a create, made before the body is read. */
  authorizeCreate(user: Caller): void {
    assertStaff(user, 'Viewers cannot create portfolios.');
  }

  /**
   * May the caller change this portfolio at all (role, visibility, category)? Routes call it
   * before the body is read; each use case checks again against the record it changes.
   */
  async authorizeChange(user: Caller, portfolioId: string): Promise<StoredPortfolio> {
    assertStaff(user, 'Viewers cannot change portfolios.');
    const current = await this.get(user, portfolioId);
    assertMayChange(user, current);
    return current;
  }

  /** The same, for a portfolio in the trash. */
  async authorizeUndelete(user: Caller, portfolioId: string): Promise<TrashEntry> {
    assertStaff(user, 'Viewers cannot restore portfolios.');
    const entry = await this.repository.getTrashed(portfolioId);
    if (!entry) throw notInTrash(portfolioId);
    assertMayChange(user, entry.snapshot);
    return entry;
  }

  /** A full list, or a stale If-Match, refuses another file before any of its bytes are read. */
  async authorizeUpload(
    user: Caller,
    portfolioId: string,
    slot: FileSlot,
    condition: Condition = {},
  ): Promise<void> {
    const current = await this.authorizeChange(user, portfolioId);
    assertExpected(current, expectedRevision({}, condition.ifMatch));
    assertRoom(current, slot, this.limits.filesPerList);
  }

  // ---- Changes ----

  async create(user: Caller, rawBody: unknown): Promise<StoredPortfolio> {
    const record = this.previewCreate(user, rawBody);
    return this.repository
      .insert(record, this.meta(user, 'create', changedFields(null, record)))
      .catch(rethrow);
  }

  /**
   * The portfolio a create of `rawBody` would store, checked as create checks it (role, category,
   * then the body), without storing it: a CSV dry run's answer, and create's first half.
   */
  previewCreate(user: Caller, rawBody: unknown): PortfolioRecord {
    this.authorizeCreate(user);
    // The category is judged from the body before its other values (DESIGN §13: 403 before 400).
    const category = asObject(rawBody).category;
    if (typeof category === 'string') assertMayCreate(user, category);
    const body = validateCreate(rawBody);
    assertMayCreate(user, body.category);
    return newPortfolio(body, this.now());
  }

  /**
   * What an update of `current` with `rawBody` would make of it, checked as update checks it,
   * without storing it, and the fields it would change (none: the update changes nothing). For
   * a CSV row judged before it is written; `update` checks again against the record it changes.
   */
  previewUpdate(
    user: Caller,
    current: PortfolioRecord,
    rawBody: unknown,
  ): { next: PortfolioRecord; changed: string[] } {
    assertStaff(user, 'Viewers cannot change portfolios.');
    assertMayChange(user, current, asObject(rawBody));
    const body = validateUpdate(rawBody);
    const next = updatedPortfolio(current, body, this.now());
    return { next, changed: changedFields(current, next) };
  }

  /** PUT: fields and command; `revision` in the body or If-Match makes it conditional. */
  async update(
    user: Caller,
    portfolioId: string,
    rawBody: unknown,
    condition: Condition = {},
  ): Promise<StoredPortfolio> {
    // Category and admin-only fields are judged from the body's keys before its values.
    const first = await this.authorizeChange(user, portfolioId);
    assertMayChange(user, first, asObject(rawBody));
    const body = validateUpdate(rawBody);
    const expected = expectedRevision(body, condition.ifMatch);
    return this.change(user, portfolioId, expected, (current) => {
      assertMayChange(user, current, body);
      return {
        next: updatedPortfolio(current, body, this.now()),
        command: body.command ?? 'save',
      };
    });
  }

  /**
   * Adds a received file: inspect it, store the blob durably, then commit the record that points
   * to it. The portfolio is checked again after the bytes arrived: it may have changed meanwhile.
   */
  async addFile(
    user: Caller,
    portfolioId: string,
    slot: FileSlot,
    upload: Upload,
    condition: Condition = {},
  ): Promise<{ record: StoredPortfolio; file: StoredFile }> {
    const { record, files } = await this.addFiles(user, portfolioId, slot, [upload], condition);
    return { record, file: files[0]! };
  }

  /**
   * Adds the files of one upload as one change, one revision (DESIGN §16: "7 files added"):
   * each is inspected and its blob stored durably, then one record pointing to all of them is
   * committed. One file refused refuses them all; the cover takes exactly one.
   */
  async addFiles(
    user: Caller,
    portfolioId: string,
    slot: FileSlot,
    uploads: Upload[],
    condition: Condition = {},
  ): Promise<{ record: StoredPortfolio; files: StoredFile[] }> {
    const releases: Array<() => void> = [];
    const adopted: string[] = [];
    let committed = false;
    try {
      const expected = expectedRevision({}, condition.ifMatch);
      if (slot === 'cover' && uploads.length !== 1) throw oneCover();
      const files: StoredFile[] = [];
      for (const upload of uploads) {
        // The file is written; its inspection, the last of its hashing and its fsync may still
        // be running. Adopting waits for the fsync.
        const inspection = await upload.inspection;
        assertAccepted(slot, inspection.kind, inspection.mimeType, inspection.extension);
        const { md5, sha256 } = await upload.hashes;
        releases.push(await this.blobs.adopt(upload.tempPath, sha256, upload.durable));
        adopted.push(upload.tempPath);
        const now = this.now();
        files.push({
          fileId: randomUUID(),
          originalFilename: upload.originalFilename,
          fullFileExtension: inspection.extension,
          mimeType: inspection.mimeType,
          description: upload.description,
          createdTime: now,
          modifiedTime: now,
          md5Checksum: md5,
          sha256,
          size: upload.size,
          dimention: inspection.dimention,
        });
      }
      let replaced: StoredFile | null = null;
      const record = await this.change(user, portfolioId, expected, (current) => {
        assertRoom(current, slot, this.limits.filesPerList, files.length);
        if (slot !== 'cover') {
          return { next: withAddedFiles(current, slot, files, this.now()), command: 'file' };
        }
        const added = withAddedFile(current, slot, files[0]!, this.now());
        replaced = added.replaced;
        return { next: added.next, command: 'file' };
      });
      committed = true;
      if (replaced) this.blobs.collect([(replaced as StoredFile).sha256]);
      for (const file of files)
        for (const listener of this.fileAddedListeners) listener(slot, file);
      return { record, files };
    } finally {
      for (const release of releases) release();
      const left = uploads.filter((upload) => !adopted.includes(upload.tempPath));
      await Promise.all(left.map((upload) => this.blobs.discard(upload.tempPath)));
      if (!committed && adopted.length > 0) {
        const kept = uploads.filter((upload) => adopted.includes(upload.tempPath));
        this.blobs.collect(await Promise.all(kept.map(async (u) => (await u.hashes).sha256)));
      }
    }
  }

  async changeFile(
    user: Caller,
    portfolioId: string,
    fileId: string,
    rawBody: unknown,
    condition: Condition = {},
  ): Promise<{ record: StoredPortfolio; slot: FileSlot; file: StoredFile }> {
    requireFile(await this.authorizeChange(user, portfolioId), fileId);
    const { description } = validateDescription(rawBody);
    const expected = expectedRevision({}, condition.ifMatch);
    let changed: StoredFile | undefined;
    const record = await this.change(user, portfolioId, expected, (current) => {
      const found = requireFile(current, fileId);
      const now = this.now();
      changed = { ...found.file, description, modifiedTime: now };
      return { next: withChangedFile(current, fileId, () => changed!, now), command: 'file' };
    });
    return { record, slot: requireFile(record, fileId).slot, file: changed! };
  }

  async removeFile(
    user: Caller,
    portfolioId: string,
    fileId: string,
    condition: Condition = {},
  ): Promise<{ record: StoredPortfolio; slot: FileSlot; file: StoredFile }> {
    const expected = expectedRevision({}, condition.ifMatch);
    let removed: { slot: FileSlot; file: StoredFile } | undefined;
    const record = await this.change(user, portfolioId, expected, (current) => {
      removed = requireFile(current, fileId);
      return { next: withChangedFile(current, fileId, () => null, this.now()), command: 'file' };
    });
    this.blobs.collect([removed!.file.sha256]);
    return { record, ...removed! };
  }

  /** The drafting images in a new order: one revision, the list a permutation of today's. */
  async reorderDrafting(
    user: Caller,
    portfolioId: string,
    rawBody: unknown,
    condition: Condition = {},
  ): Promise<StoredPortfolio> {
    await this.authorizeChange(user, portfolioId);
    const { fileIds } = validateOrder(rawBody);
    const expected = expectedRevision({}, condition.ifMatch);
    return this.change(user, portfolioId, expected, (current) => ({
      next: withReorderedDrafting(current, fileIds, this.now()),
      command: 'reorder',
    }));
  }

  /**
   * A drafting image becomes the cover and the old cover takes its place in the drafting
   * process: one revision. Choosing the cover itself changes nothing and makes no revision.
   */
  async makeCover(
    user: Caller,
    portfolioId: string,
    fileId: string,
    condition: Condition = {},
  ): Promise<StoredPortfolio> {
    const first = await this.authorizeChange(user, portfolioId);
    requireFile(first, fileId);
    const expected = expectedRevision({}, condition.ifMatch);
    if (first.cover?.fileId === fileId) {
      assertExpected(first, expected);
      return first;
    }
    return this.change(user, portfolioId, expected, (current) => {
      requireFile(current, fileId);
      return { next: withCoverFromDrafting(current, fileId, this.now()), command: 'cover' };
    });
  }

  /** One description for several files of one portfolio, in one revision. */
  async describeFiles(
    user: Caller,
    portfolioId: string,
    rawBody: unknown,
    condition: Condition = {},
  ): Promise<{ record: StoredPortfolio; files: Array<{ slot: FileSlot; file: StoredFile }> }> {
    const first = await this.authorizeChange(user, portfolioId);
    const { fileIds, description } = validateFilesDescription(rawBody);
    for (const fileId of fileIds) requireFile(first, fileId);
    const expected = expectedRevision({}, condition.ifMatch);
    const record = await this.change(user, portfolioId, expected, (current) => {
      for (const fileId of fileIds) requireFile(current, fileId);
      return {
        next: withDescribedFiles(current, fileIds, description, this.now()),
        command: 'describe',
      };
    });
    const unique = [...new Set(fileIds)];
    return { record, files: unique.map((fileId) => requireFile(record, fileId)) };
  }

  /** Moves the portfolio to the trash (DESIGN §9); If-Match makes it conditional. */
  async delete(user: Caller, portfolioId: string, condition: Condition = {}): Promise<TrashEntry> {
    const expected = expectedRevision({}, condition.ifMatch);
    return this.turns.run(portfolioId, async () => {
      for (let attempt = 1; ; attempt++) {
        const current = await this.authorizeChange(user, portfolioId);
        assertExpected(current, expected);
        try {
          return await this.repository.delete(
            portfolioId,
            current.revision,
            this.meta(user, 'delete', []),
          );
        } catch (error) {
          if (!retryable(error, expected, attempt)) throw apiErrorOf(error, expected?.source);
        }
      }
    });
  }

  /**
   * A new revision with the content of an older one (DESIGN §9): same rules as PUT, the files
   * of that revision come back with it, and nothing is ever rewound.
   */
  async restoreRevision(
    user: Caller,
    portfolioId: string,
    revision: number,
    rawBody: unknown,
    condition: Condition = {},
  ): Promise<StoredPortfolio> {
    await this.authorizeChange(user, portfolioId);
    const body = validateConditional(rawBody ?? {});
    const expected = expectedRevision(body, condition.ifMatch);
    const old = (await this.revision(user, portfolioId, revision)).snapshot;
    return this.change(user, portfolioId, expected, (current) => {
      const next = restoredPortfolio(current, old, this.now());
      assertMayChange(user, current, restoredAdminParts(current, next));
      return { next, command: 'restore' };
    });
  }

  /** Brings a portfolio back from the trash, as it was deleted, at a new revision. */
  async restoreFromTrash(
    user: Caller,
    portfolioId: string,
    rawBody: unknown,
    condition: Condition = {},
  ): Promise<StoredPortfolio> {
    const entry = await this.authorizeUndelete(user, portfolioId);
    const body = validateConditional(rawBody ?? {});
    assertExpected(entry, expectedRevision(body, condition.ifMatch));
    const next = undeletedPortfolio(entry.snapshot, this.now());
    return this.repository
      .restoreFromTrash(portfolioId, next, this.meta(user, 'undelete', changedFields(null, next)))
      .catch(rethrow);
  }

  /** Admin only: removes one trashed portfolio for good, with its history. */
  async purge(user: Caller, portfolioId: string): Promise<void> {
    if (user.role !== 'admin') throw new ApiError('FORBIDDEN', 'Only an admin may purge.');
    const entry = await this.repository.getTrashed(portfolioId);
    if (!entry) throw notInTrash(portfolioId);
    // Read before the purge takes them: files only older revisions still hold go with it too.
    const held = [entry.snapshot, ...(await this.keptSnapshots(portfolioId))];
    const purged = await this.repository.purge({ portfolioId }).catch(rethrow);
    if (!purged.includes(portfolioId)) throw notInTrash(portfolioId);
    this.blobs.collect(held.flatMap((record) => filesOf(record).map((file) => file.sha256)));
  }

  /** Every kept revision's record of one portfolio, page by page. */
  private async keptSnapshots(portfolioId: string): Promise<PortfolioRecord[]> {
    const snapshots: PortfolioRecord[] = [];
    let cursor: string | null = null;
    do {
      const page: Page<RevisionEntry> = await this.repository
        .revisions(portfolioId, 500, cursor)
        .catch(rethrow);
      snapshots.push(...page.items.map((item) => item.snapshot));
      cursor = page.next;
    } while (cursor !== null);
    return snapshots;
  }

  // ---- Folder ingest (DESIGN §16) ----

  /**
   * Finds the caller's live portfolio with this memberBarcode and projectTitle, or makes it, and
   * attaches the named blobs it does not hold yet, all in one revision (a new portfolio holds
   * them from revision 1). Each file is built from its blob's bytes (DESIGN §5). Running it again
   * changes nothing, so an interrupted ingest can simply be run again. Ingests of one key take
   * turns, so two at once cannot both make the portfolio.
   */
  async ingest(
    user: Caller,
    rawBody: unknown,
  ): Promise<{ record: StoredPortfolio; result: IngestResult }> {
    this.authorizeCreate(user);
    const category = asObject(asObject(rawBody).portfolio).category;
    if (typeof category === 'string') assertMayCreate(user, category);
    const body = validateIngest(rawBody);
    const fields = body.portfolio;
    assertMayCreate(user, fields.category);
    const key = `ingest:${fields.memberBarcode}\u0000${fields.projectTitle}`;
    return this.turns.run(key, async () => {
      const release = this.blobs.hold?.(body.files.map((file) => file.sha256));
      try {
        const found = await this.findIngested(user, fields.memberBarcode, fields.projectTitle);
        const files = await this.ingestedFiles(found ?? null, body.files);
        const kept = body.files.length - files.length;
        if (!found) {
          const empty = newPortfolio(fields, this.now());
          const { next, added } = withIngestedFiles(empty, files, this.now());
          assertFileLists(next, this.limits.filesPerList);
          const record = await this.repository
            .insert(
              { ...next, revision: empty.revision, modifiedTime: empty.modifiedTime },
              this.meta(user, 'create', changedFields(null, next)),
            )
            .catch(rethrow);
          return { record, result: this.ingestResult(record, true, added.length, kept) };
        }
        let added = 0;
        let replaced: StoredFile | null = null;
        const record =
          files.length === 0
            ? found
            : await this.change(user, found.portfolioId, undefined, (current) => {
                const step = withIngestedFiles(current, files, this.now());
                assertFileLists(step.next, this.limits.filesPerList);
                added = step.added.length;
                replaced = step.replaced;
                return { next: step.next, command: 'file' };
              });
        if (replaced) this.blobs.collect([(replaced as StoredFile).sha256]);
        return {
          record,
          result: this.ingestResult(record, false, added, kept + files.length - added),
        };
      } finally {
        release?.();
      }
    });
  }

  private ingestResult(record: StoredPortfolio, created: boolean, added: number, kept: number) {
    return { portfolioId: record.portfolioId, created, revision: record.revision, added, kept };
  }

  /** The live portfolio an ingest adds to: the caller may change it, same barcode and title. */
  private async findIngested(
    user: Caller,
    memberBarcode: string,
    projectTitle: string,
  ): Promise<StoredPortfolio | undefined> {
    let after: Cursor | null = null;
    do {
      const page: ListPage<'portfolioId' | 'projectTitle' | 'memberBarcode'> = await this.repository
        .query({
          ...listScope(DEFAULT_ORDER, new Map([['memberBarcode', [memberBarcode]]]), false),
          after,
          limit: 500,
          fields: ['portfolioId', 'projectTitle', 'memberBarcode'],
        })
        .catch(rethrow);
      for (const item of page.items) {
        if (item.memberBarcode !== memberBarcode || item.projectTitle !== projectTitle) continue;
        const record = await this.repository.get(item.portfolioId);
        if (record && isVisibleTo(user, record)) {
          assertMayChange(user, record);
          return record;
        }
      }
      after = page.next;
    } while (after !== null);
    return undefined;
  }

  /**
   * The files of an ingest the portfolio does not hold yet (once each), built from their blobs'
   * bytes: a blob the server lacks is a 404, a kind the slot refuses a 415.
   */
  private async ingestedFiles(
    current: PortfolioRecord | null,
    refs: ReadonlyArray<{
      slot: FileSlot;
      sha256: string;
      originalFilename: string;
      description?: string;
    }>,
  ): Promise<Array<{ slot: FileSlot; file: StoredFile }>> {
    const facts = this.facts;
    if (!facts) throw new Error('ingest needs the blob facts reader');
    const seen = new Set<string>();
    const files: Array<{ slot: FileSlot; file: StoredFile }> = [];
    const now = this.now();
    for (const ref of refs) {
      const key = `${ref.slot}:${ref.sha256}`;
      if (seen.has(key) || holds(current, ref.slot, ref.sha256)) continue;
      seen.add(key);
      const originalFilename = cleanFilename(ref.originalFilename);
      const read = await facts(ref.sha256, originalFilename).catch((error: unknown) => {
        if (error instanceof ApiError && error.code === 'BLOB_NOT_FOUND') {
          throw new ApiError(
            'BLOB_NOT_FOUND',
            `The file "${originalFilename}" has not been sent yet; send its bytes first (PUT /api/v1/blobs/${ref.sha256}).`,
          );
        }
        throw error;
      });
      const maxBytes = this.limits.fileBytes;
      if (maxBytes !== undefined && read.size > maxBytes) throw tooLarge(maxBytes);
      const ingested = {
        fileId: randomUUID(),
        sha256: ref.sha256,
        originalFilename,
        description: ref.description ?? '',
      };
      files.push({ slot: ref.slot, file: fileFromBlob(ref.slot, ingested, read, undefined, now) });
    }
    return files;
  }

  // ---- Bulk (DESIGN §16) ----

  /**
   * One portfolio's part of a bulk edit, as one revision: `set`'s fields, the tags added and
   * removed (against the lists as they are at the write), and a command — judged, validated and
   * built exactly as a PUT of the same values would be. `expected` makes it conditional.
   */
  async bulkChange(
    user: Caller,
    portfolioId: string,
    edit: BulkEdit,
    expected?: number,
  ): Promise<StoredPortfolio> {
    const first = await this.authorizeChange(user, portfolioId);
    assertMayChange(user, first, bulkBody(first, edit));
    const condition = expected === undefined ? undefined : bodyRevision(expected);
    return this.change(user, portfolioId, condition, (current) => {
      const body = validateUpdate(bulkBody(current, edit));
      assertMayChange(user, current, body);
      return {
        next: updatedPortfolio(current, body, this.now()),
        command: body.command ?? 'save',
      };
    });
  }

  /**
   * Undoes a change (a bulk edit's): the content and the published/active state of `revision`
   * again, at a new revision, only while the portfolio is still at `at` (else 409, unchanged).
   * Unlike a restore of history it brings the state back too: the change it undoes may have
   * been a command.
   */
  async revert(
    user: Caller,
    portfolioId: string,
    revision: number,
    at: number,
  ): Promise<StoredPortfolio> {
    assertExpected(await this.authorizeChange(user, portfolioId), bodyRevision(at));
    const old = (await this.revision(user, portfolioId, revision)).snapshot;
    return this.change(user, portfolioId, bodyRevision(at), (current) => {
      const next = {
        ...restoredPortfolio(current, old, this.now()),
        published: old.published,
        active: old.active,
      };
      const stateChanged = next.published !== current.published || next.active !== current.active;
      assertMayChange(user, current, {
        ...restoredAdminParts(current, next),
        ...(stateChanged && { command: 'publish' as const }),
      });
      return { next, command: 'restore' };
    });
  }

  // ---- Import (DESIGN §11) ----

  /**
   * Creates a portfolio this library lacks with the history another library kept of it (a ZIP
   * import): the same rights as a create of its current record that also sets what it holds
   * (categories, admin-only fields, published/active). `revisions` ascend; the last is current,
   * its files already built from their blobs.
   */
  async insertImported(user: Caller, revisions: ImportedRevision[]): Promise<StoredPortfolio> {
    const current = revisions.at(-1)!.snapshot;
    return this.turns.run(current.portfolioId, () => this.insertImportedInTurn(user, revisions));
  }

  /**
   * `insertImported` for a caller already in this portfolio's turn (see `inTurn`): sync's create
   * of a portfolio that brings its history along (DESIGN §10).
   */
  async insertImportedInTurn(
    user: Caller,
    revisions: ImportedRevision[],
  ): Promise<StoredPortfolio> {
    assertStaff(user, 'Viewers cannot import portfolios.');
    const current = revisions.at(-1)!.snapshot;
    assertMayChange(user, current, importedAdminParts(current));
    assertFileLists(current, this.limits.filesPerList);
    return this.repository.insertWithHistory(revisions).catch(rethrow);
  }

  // ---- Sync (DESIGN §10) ----

  /**
   * Runs `task` in this portfolio's turn, between the service's own changes of it: sync applies
   * a replica's mutation there with the repository's compare-and-set.
   */
  inTurn<T>(portfolioId: string, task: () => Promise<T>): Promise<T> {
    return this.turns.run(portfolioId, task);
  }

  /** A change built by sync (resolving a conflict) through the one write path below. */
  changeForSync(
    user: Caller,
    portfolioId: string,
    expected: Expected | undefined,
    step: (current: StoredPortfolio) => Step,
  ): Promise<StoredPortfolio> {
    return this.change(user, portfolioId, expected, step);
  }

  // ---- The one write path ----

  /**
   * Reads the portfolio, checks the caller against it, builds the next record and stores it
   * with compare-and-set on the revision read. The conditional check is made here, once: a stale
   * `expected` is a 409 before anything is built, and a change that slips in between the read
   * and the write is one too (or, for an unconditional change, a re-read and another attempt).
   */
  private async change(
    user: Caller,
    portfolioId: string,
    expected: Expected | undefined,
    step: (current: StoredPortfolio) => Step,
  ): Promise<StoredPortfolio> {
    return this.turns.run(portfolioId, async () => {
      for (let attempt = 1; ; attempt++) {
        const current = await this.authorizeChange(user, portfolioId);
        assertExpected(current, expected);
        const { next, command } = step(current);
        try {
          return await this.repository.update(
            portfolioId,
            current.revision,
            next,
            this.meta(user, command, changedFields(current, next)),
          );
        } catch (error) {
          if (!retryable(error, expected, attempt)) throw apiErrorOf(error, expected?.source);
        }
      }
    });
  }

  private meta(user: Caller, command: string, fields: string[]): ChangeMeta {
    return { by: user.username, time: this.now(), command, changedFields: fields };
  }
}

function assertStaff(user: Caller, message = 'This needs the editor or admin role.'): void {
  if (!isStaff(user)) throw new ApiError('FORBIDDEN', message);
}

/** A bulk edit's or an undo's expected revision, named like a body's `revision`. */
function bodyRevision(revision: number): Expected {
  return { revision, source: 'body.revision' };
}

/** What a bulk edit does to each portfolio (DESIGN §16). */
export interface BulkEdit {
  set?: BulkSet | undefined;
  addTags?: TagChanges | undefined;
  removeTags?: TagChanges | undefined;
  command?: Command | undefined;
}

/** Required fields of a PUT (the field table's `required` rows): a bulk edit keeps their values. */
const REQUIRED_KEYS = fieldKeysWith('required', true);

/**
 * The PUT body a bulk edit amounts to for `current`: its required fields as they are, `set`, each
 * tag list with the added tags appended (once) and the removed ones taken out, and the command.
 */
function bulkBody(current: PortfolioRecord, edit: BulkEdit): Record<string, unknown> {
  const body: Record<string, unknown> = {
    ...Object.fromEntries(REQUIRED_KEYS.map((key) => [key, current[key]])),
    ...edit.set,
  };
  const keys = new Set([
    ...Object.keys(edit.addTags ?? {}),
    ...Object.keys(edit.removeTags ?? {}),
  ]) as Set<keyof TagChanges>;
  for (const key of keys) {
    const base = key in body ? tagsOf(body[key]) : current[key];
    const removed = new Set(edit.removeTags?.[key] ?? []);
    body[key] = [...new Set([...base, ...(edit.addTags?.[key] ?? [])])].filter(
      (tag) => !removed.has(tag),
    );
  }
  if (edit.command !== undefined) body.command = edit.command;
  return body;
}

/** A tag list as a body may send it (referenceStyling also as one string; null clears). */
function tagsOf(value: unknown): string[] {
  if (value === null || value === undefined || value === '') return [];
  return typeof value === 'string' ? [value] : (value as string[]);
}

function assertExpected(current: { revision: number }, expected: Expected | undefined): void {
  if (expected !== undefined && expected.revision !== current.revision)
    throw revisionConflict(current.revision, expected.revision, expected.source);
}

function retryable(error: unknown, expected: Expected | undefined, attempt: number): boolean {
  return error instanceof RevisionConflictError && expected === undefined && attempt < MAX_ATTEMPTS;
}

function rethrow(error: unknown): never {
  throw apiErrorOf(error);
}

function notFound(portfolioId: string): ApiError {
  return new ApiError('PORTFOLIO_NOT_FOUND', `No portfolio "${portfolioId}".`);
}

function notInTrash(portfolioId: string): ApiError {
  return new ApiError('PORTFOLIO_NOT_FOUND', `No portfolio "${portfolioId}" in the trash.`);
}

function oneCover(): ApiError {
  return new ApiError('VALIDATION_FAILED', 'A portfolio has one cover: send one file.', [
    { field: 'body.file', message: 'must be one file' },
  ]);
}

function requireFile(record: PortfolioRecord, fileId: string) {
  const found = findFile(record, fileId);
  if (!found) throw new ApiError('FILE_NOT_FOUND', `No file "${fileId}" in this portfolio.`);
  return found;
}

/** The keys of a body that may not be an object yet (it is validated after authorization). */
function asObject(body: unknown): Record<string, unknown> {
  return typeof body === 'object' && body !== null && !Array.isArray(body)
    ? (body as Record<string, unknown>)
    : {};
}

/** What an imported record sets that a new portfolio would not have: judged as a body would be. */
function importedAdminParts(record: PortfolioRecord) {
  return {
    category: record.category,
    ...(record.certificateByOrg.length > 0 && { certificateByOrg: record.certificateByOrg }),
    ...(record.certificateDesc !== '' && { certificateDesc: record.certificateDesc }),
    ...(record.staffPick && { staffPick: record.staffPick }),
    ...((record.published || !record.active) && { command: 'publish' as const }),
  };
}

/** The admin-only fields a restore would change, in the shape assertMayChange judges. */
function restoredAdminParts(current: PortfolioRecord, next: PortfolioRecord) {
  const changed = new Set(changedFields(current, next));
  return {
    category: next.category,
    ...(changed.has('certificateByOrg') && { certificateByOrg: next.certificateByOrg }),
    ...(changed.has('certificateDesc') && { certificateDesc: next.certificateDesc }),
    ...(changed.has('staffPick') && { staffPick: next.staffPick }),
  };
}
