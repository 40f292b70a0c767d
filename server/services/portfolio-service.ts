import { randomUUID } from 'node:crypto';
import {
  ConditionalBodySchema,
  CreatePortfolioBodySchema,
  FileDescriptionBodySchema,
  isStaff,
  isVisibleTo,
  UpdatePortfolioBodySchema,
  type Actor,
  type FileSlot,
  type PortfolioRecord,
  type StoredFile,
} from '../../shared';
import type { LimitOptions } from '../config';
import {
  assertAccepted,
  assertFileLists,
  assertRoom,
  filesOf,
  findFile,
  withAddedFile,
  withChangedFile,
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
import { KeyedSerialQueue } from '../lib/keyed-serial-queue';
import type { Received } from '../media/receive-file';
import {
  RevisionConflictError,
  type ChangeMeta,
  type ChangePage,
  type ImportedRevision,
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
  limits: Pick<LimitOptions, 'filesPerList'>;
  now?: () => number;
}

const validateCreate = bodyValidator(CreatePortfolioBodySchema);
const validateUpdate = bodyValidator(UpdatePortfolioBodySchema);
const validateDescription = bodyValidator(FileDescriptionBodySchema);
const validateConditional = bodyValidator(ConditionalBodySchema);

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
  private readonly limits: Pick<LimitOptions, 'filesPerList'>;
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
    this.authorizeCreate(user);
    // The category is judged from the body before its other values (DESIGN §13: 403 before 400).
    const category = asObject(rawBody).category;
    if (typeof category === 'string') assertMayCreate(user, category);
    const body = validateCreate(rawBody);
    assertMayCreate(user, body.category);
    const record = newPortfolio(body, this.now());
    return this.repository
      .insert(record, this.meta(user, 'create', changedFields(null, record)))
      .catch(rethrow);
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
    let release: (() => void) | undefined;
    let committed = false;
    try {
      const expected = expectedRevision({}, condition.ifMatch);
      // The file is written; its inspection, the last of its hashing and its fsync may still be
      // running. Adopting waits for the fsync.
      const inspection = await upload.inspection;
      assertAccepted(slot, inspection.kind, inspection.mimeType, inspection.extension);
      const { md5, sha256 } = await upload.hashes;
      release = await this.blobs.adopt(upload.tempPath, sha256, upload.durable);
      const now = this.now();
      const file: StoredFile = {
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
      };
      let replaced: StoredFile | null = null;
      const record = await this.change(user, portfolioId, expected, (current) => {
        assertRoom(current, slot, this.limits.filesPerList);
        const added = withAddedFile(current, slot, file, this.now());
        replaced = added.replaced;
        return { next: added.next, command: 'file' };
      });
      committed = true;
      if (replaced) this.blobs.collect([(replaced as StoredFile).sha256]);
      for (const listener of this.fileAddedListeners) listener(slot, file);
      return { record, file };
    } finally {
      release?.();
      if (!release) await this.blobs.discard(upload.tempPath);
      else if (!committed) this.blobs.collect([(await upload.hashes).sha256]);
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
