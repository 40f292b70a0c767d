import { randomUUID } from 'node:crypto';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import {
  FileDescriptionSchema,
  FileUploadBodySchema,
  Identifier,
  isStaff,
  ChangeStampsSchema,
  CreateHistorySchema,
  fieldKeysWhere,
  type CreateHistory,
  PortfolioRecordSchema,
  ResolveConflictBodySchema,
  Sha256Schema,
  type AppliedMutation,
  type Conflict,
  type ConflictListItem,
  type ErrorDetail,
  FILE_SLOTS,
  type FileSlot,
  type Mutation,
  type MutationResult,
  type MutationStatus,
  type PortfolioRecord,
  type StoredFile,
} from '../../shared';
import type { Authenticated } from '../auth/session-service';
import type { LimitOptions } from '../config';
import {
  assertFileLists,
  fileFromBlob,
  filesOf,
  tooManyFiles,
  type FileFacts,
} from '../domain/portfolio-files';
import {
  assertMayChange,
  assertMayCreate,
  changedFields as recordChanges,
  expectedRevision,
  newPortfolio,
  undeletedPortfolio,
} from '../domain/portfolio-rules';
import { sanitizeHtml } from '../domain/sanitize-html';
import {
  isMergedField,
  mergeRecords,
  MERGED_FIELDS,
  type FieldConflict,
  type MergeFields,
} from '../domain/three-way-merge';
import { ApiError } from '../errors';
import { cleanFilename } from '../media/file-names';
import { tooLarge } from '../media/receive-file';
import {
  RevisionConflictError,
  type ChangeMeta,
  type ImportedRevision,
  type PortfolioRepository,
  type StoredPortfolio,
} from '../repositories/portfolio-repository-contract';
import { bodyValidator } from '../validation/body-validator';
import type { DeviceService } from './device-service';
import type { Caller, Condition, PortfolioService } from './portfolio-service';
import { apiErrorOf } from './repository-errors';

/** The blob store as sync uses it: is a blob there, and keep it while a record comes to use it. */
export interface SyncBlobs {
  has(sha256: string): Promise<boolean>;
  hold(sha256s: Iterable<string>): () => void;
}

export interface SyncServiceOptions {
  repository: PortfolioRepository;
  portfolios: PortfolioService;
  devices: DeviceService;
  blobs: SyncBlobs;
  /** What a blob's bytes say it is (media/blob-facts.ts); refuses what an upload would refuse. */
  facts: (sha256: string, clientName: string) => Promise<FileFacts>;
  limits: Pick<LimitOptions, 'filesPerList' | 'fileBytes'>;
  now?: () => number;
}

/** Applied mutations are answered again for at least this long (the protocol asks 30 days). */
const KEEP_RESULTS_MS = 31 * 86_400_000;
/** Another process sharing the database may slip in between read and compare-and-set. */
const MAX_ATTEMPTS = 8;
/** History's name for a change a replica pushed, and for a resolved conflict. */
const SYNC_COMMAND = 'sync';
const RESOLVE_COMMAND = 'resolve-conflict';
/** The replica id an import's merges are recorded under (a conflict shows where it came from). */
export const IMPORT_REPLICA = 'import';

/**
 * Keys of a pushed record that are the hub's: identity and bookkeeping (the field table's) and
 * the change stamps. Ignored, never an error.
 */
const IGNORED_KEYS = new Set<string>([
  ...fieldKeysWhere((row) => row.part === 'identity' || row.part === 'bookkeeping'),
  ...Object.keys(ChangeStampsSchema.properties),
]);

/** File metadata older replicas send along: the hub computes each of these from the bytes. */
const IGNORED_FILE_KEYS = [
  'fullFileExtension',
  'mimeType',
  'createdTime',
  'modifiedTime',
  'md5Checksum',
  'size',
  'dimention',
] as const;

const record = PortfolioRecordSchema.properties;
/**
 * A file as a mutation names it (DESIGN §5): a blob by its sha256, with the name and description
 * the only parts a replica may give. The hub computes every other field from the blob's bytes;
 * the metadata older replicas also send is accepted and ignored, never stored.
 */
const PushedFileSchema = Type.Object(
  {
    fileId: Identifier,
    sha256: Sha256Schema,
    originalFilename: FileUploadBodySchema.properties.originalFilename,
    description: Type.Optional(FileDescriptionSchema),
    ...Object.fromEntries(IGNORED_FILE_KEYS.map((key) => [key, Type.Optional(Type.Unknown())])),
  },
  { additionalProperties: false },
);
const fieldSchemas: Record<string, TSchema> = Object.fromEntries(
  MERGED_FIELDS.map((field) => [field, record[field]]),
);
fieldSchemas.cover = Type.Union([PushedFileSchema, Type.Null()]);
fieldSchemas.draftingProcess = Type.Array(PushedFileSchema);
fieldSchemas.additionalDocument = Type.Array(PushedFileSchema);
const REQUIRED_ON_CREATE = ['memberBarcode', 'category', 'projectTitle', 'projectDetail'];

const validateFields = bodyValidator(
  Type.Object(
    Object.fromEntries(MERGED_FIELDS.map((field) => [field, Type.Optional(fieldSchemas[field]!)])),
    { additionalProperties: false },
  ),
);
const validateCreateFields = bodyValidator(
  Type.Object(
    Object.fromEntries(
      MERGED_FIELDS.map((field) => [
        field,
        REQUIRED_ON_CREATE.includes(field)
          ? fieldSchemas[field]!
          : Type.Optional(fieldSchemas[field]!),
      ]),
    ),
    { additionalProperties: false },
  ),
);
const validateResolve = bodyValidator(ResolveConflictBodySchema);
const validateHistory = bodyValidator(CreateHistorySchema);

/** A mutation refused: nothing of it was applied; a retry is judged afresh. */
class Rejection extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message);
  }
}

type PushedFile = Static<typeof PushedFileSchema>;
/** A mutation's fields as validated: files still as the replica named them. */
type PushedFields = Omit<MergeFields, FileSlot> & {
  cover?: PushedFile | null;
  draftingProcess?: PushedFile[];
  additionalDocument?: PushedFile[];
};

/** A create's history as checked: each older revision's fields validated, files still refs. */
type CheckedHistory = Omit<CreateHistory, 'revisions'> & {
  revisions: Array<Omit<CreateHistory['revisions'][number], 'fields'> & { pushed: PushedFields }>;
};

/** What one attempt of a mutation does to the stored state. */
type Outcome = { status: MutationStatus; stored: StoredPortfolio; conflictId?: string };

/**
 * The hub side of sync (DESIGN §10): replicas' mutations, applied each in one compare-and-set
 * through the rules of PortfolioService (roles, categories, validation, the domain builders),
 * in that portfolio's turn; and the conflicts they leave for a person.
 *
 * Idempotency: an applied mutation's id is committed in the record it changed (`syncApplied`,
 * in the same compare-and-set as the change), so a retry after any kill finds it and answers
 * the stored result; a mutation that was not committed was not applied. A delete leaves the
 * record in the trash, which answers a retried delete the same way.
 */
export class SyncService {
  private readonly repository: PortfolioRepository;
  private readonly portfolios: PortfolioService;
  private readonly devices: DeviceService;
  private readonly blobs: SyncBlobs;
  private readonly facts: SyncServiceOptions['facts'];
  private readonly limits: SyncServiceOptions['limits'];
  private readonly now: () => number;

  constructor(options: SyncServiceOptions) {
    this.repository = options.repository;
    this.portfolios = options.portfolios;
    this.devices = options.devices;
    this.blobs = options.blobs;
    this.facts = options.facts;
    this.limits = options.limits;
    this.now = options.now ?? Date.now;
  }

  // ---- Mutations ----

  /** Applies a batch in order, each on its own; 409 for the whole batch if the replica id is not the caller's. */
  async applyMutations(
    auth: Authenticated,
    replicaId: string,
    mutations: Mutation[],
  ): Promise<MutationResult[]> {
    assertStaff(auth.user);
    await this.devices.assertReplicaOf(auth, replicaId);
    const user: Caller = auth.user;
    const results: MutationResult[] = [];
    for (const mutation of mutations) results.push(await this.applyOne(user, replicaId, mutation));
    return results;
  }

  /**
   * One portfolio of a ZIP import that this library has with other content (DESIGN §11): merged
   * as a replica's update against `baseRevision` (the newest revision both sides hold alike), so
   * different fields merge and the same field changed on both sides is a conflict. The mutation
   * id is the portfolio file's sha256: importing the same file again answers the stored result.
   */
  async applyImport(user: Caller, mutation: Mutation): Promise<MutationResult> {
    assertStaff(user);
    return this.applyOne(user, IMPORT_REPLICA, mutation);
  }

  private async applyOne(
    user: Caller,
    replicaId: string,
    mutation: Mutation,
  ): Promise<MutationResult> {
    const { portfolioId, mutationId } = mutation;
    return this.portfolios.inTurn(portfolioId, async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          const seen = await this.seenResult(replicaId, mutation);
          if (seen) return seen;
          const outcome = await this.attempt(user, replicaId, mutation);
          return {
            mutationId,
            status: outcome.status,
            portfolioId,
            revision: outcome.stored.revision,
            seq: outcome.stored.seq,
            ...(outcome.conflictId && { conflictId: outcome.conflictId }),
          };
        } catch (error) {
          if (error instanceof RevisionConflictError && attempt < MAX_ATTEMPTS) continue;
          return this.rejected(mutation, error);
        }
      }
    });
  }

  /** The stored result of a mutation applied before, if any. */
  private async seenResult(
    replicaId: string,
    mutation: Mutation,
  ): Promise<MutationResult | undefined> {
    const live = await this.repository.get(mutation.portfolioId);
    const trashed = live ? undefined : await this.repository.getTrashed(mutation.portfolioId);
    const holder = live ?? trashed?.snapshot;
    const isThis = (applied: AppliedMutation) =>
      applied.replicaId === replicaId && applied.mutationId === mutation.mutationId;
    if (!holder) {
      // Purged since: its tombstone remembers what was applied to it, so a replayed create
      // does not make it again.
      const purged = await this.repository.getPurged(mutation.portfolioId);
      const gone = purged?.syncApplied.find(isThis);
      if (purged && gone) {
        return {
          mutationId: mutation.mutationId,
          status: gone.status as MutationStatus,
          portfolioId: mutation.portfolioId,
          revision: gone.revision,
          seq: purged.seq,
          ...(gone.conflictId && { conflictId: gone.conflictId }),
        };
      }
    }
    const entry = holder?.syncApplied?.find(isThis);
    if (entry && holder) {
      const seq =
        holder.revision === entry.revision
          ? holder.seq
          : ((await this.repository.revision(mutation.portfolioId, entry.revision))?.seq ??
            holder.seq);
      return {
        mutationId: mutation.mutationId,
        status: entry.status as MutationStatus,
        portfolioId: mutation.portfolioId,
        revision: entry.revision,
        seq,
        ...(entry.conflictId && { conflictId: entry.conflictId }),
      };
    }
    // A delete leaves no mark in the record; the trash answers for it.
    if (mutation.op === 'delete' && trashed) {
      return {
        mutationId: mutation.mutationId,
        status: 'applied',
        portfolioId: mutation.portfolioId,
        revision: trashed.revision,
        seq: trashed.seq,
      };
    }
    return undefined;
  }

  private async attempt(user: Caller, replicaId: string, mutation: Mutation): Promise<Outcome> {
    assertBlobNames(mutation.files ?? []);
    const pushed = this.checkedFields(mutation);
    const history = this.checkedHistory(mutation);
    await this.assertBlobs(mutation, [pushed, ...(history?.revisions ?? []).map((r) => r.pushed)]);
    const release = this.blobs.hold(mutation.files ?? []);
    try {
      const fields = await this.withStoredFiles(mutation.portfolioId, pushed);
      switch (mutation.op) {
        case 'create':
          return await this.create(user, replicaId, mutation, fields, history);
        case 'update':
          return await this.update(user, replicaId, mutation, fields);
        case 'delete':
          return await this.remove(user, replicaId, mutation);
        case 'restore':
          return await this.restore(user, replicaId, mutation);
      }
    } finally {
      release();
    }
  }

  private async create(
    user: Caller,
    replicaId: string,
    mutation: Mutation,
    fields: MergeFields,
    history?: CheckedHistory,
  ): Promise<Outcome> {
    const live = await this.repository.get(mutation.portfolioId);
    if (live) {
      // Made on the hub (or by another replica) with the same id: merged with no base, so
      // nothing differing is overwritten silently.
      return this.update(user, replicaId, { ...mutation, baseRevision: undefined }, fields);
    }
    if (await this.repository.getTrashed(mutation.portfolioId)) {
      throw new Rejection('ID_TAKEN', `The portfolioId "${mutation.portfolioId}" is in the trash.`);
    }
    assertMayCreate(user, fields.category!);
    authorize(user, { category: fields.category! }, fields, null);
    const now = this.now();
    const fresh = newPortfolio(
      {
        portfolioId: mutation.portfolioId,
        memberBarcode: fields.memberBarcode!,
        category: fields.category!,
        projectTitle: fields.projectTitle!,
        projectDetail: fields.projectDetail!,
      },
      now,
    );
    const next: PortfolioRecord = {
      ...fresh,
      ...fields,
      syncApplied: [applied(replicaId, mutation, 'applied', 1, now)],
    };
    assertFileLists(next, this.limits.filesPerList);
    if (history) {
      return {
        status: 'applied',
        stored: await this.createWithHistory(user, replicaId, mutation, next, history),
      };
    }
    const stored = await this.repository.insert(
      next,
      this.meta(user, 'create', recordChanges(null, next)),
    );
    return { status: 'applied', stored };
  }

  /**
   * A create that brings the portfolio's history (DESIGN §10, §11): its older revisions and the
   * record keep their numbers, authors, times, commands and changed fields, stored in one commit
   * through the service, as an import's. Each file is built again from its blob's bytes.
   */
  private async createWithHistory(
    user: Caller,
    replicaId: string,
    mutation: Mutation,
    next: PortfolioRecord,
    history: CheckedHistory,
  ): Promise<StoredPortfolio> {
    const made = { createdTime: history.createdTime, createdBy: history.createdBy };
    const revisions: ImportedRevision[] = [];
    for (const { pushed, ...stamps } of history.revisions) {
      const fields = await this.withStoredFiles(mutation.portfolioId, pushed);
      const fresh = newPortfolio(
        {
          portfolioId: mutation.portfolioId,
          memberBarcode: fields.memberBarcode!,
          category: fields.category!,
          projectTitle: fields.projectTitle!,
          projectDetail: fields.projectDetail!,
        },
        stamps.modifiedTime,
      );
      const snapshot = { ...fresh, ...fields, ...made, revision: stamps.revision };
      // The rights a create of each kept record would need: history brings in nothing more.
      authorize(user, { category: snapshot.category }, fields, null);
      revisions.push({
        ...stamps,
        snapshot: { ...snapshot, modifiedTime: stamps.modifiedTime, modifiedBy: stamps.modifiedBy },
      });
    }
    const { revisions: _older, createdTime: _t, createdBy: _b, ...stamps } = history;
    const now = this.now();
    revisions.push({
      ...stamps,
      snapshot: {
        ...next,
        ...made,
        revision: stamps.revision,
        modifiedTime: stamps.modifiedTime,
        modifiedBy: stamps.modifiedBy,
        syncApplied: [applied(replicaId, mutation, 'applied', stamps.revision, now)],
      },
    });
    return this.portfolios.insertImportedInTurn(user, revisions);
  }

  private async update(
    user: Caller,
    replicaId: string,
    mutation: Mutation,
    fields: MergeFields,
  ): Promise<Outcome> {
    const current = await this.repository.get(mutation.portfolioId);
    if (!current) {
      const trashed = await this.repository.getTrashed(mutation.portfolioId);
      if (trashed) return this.editDeleted(user, replicaId, mutation, fields, trashed.snapshot);
      throw new Rejection('PORTFOLIO_NOT_FOUND', `No portfolio "${mutation.portfolioId}".`);
    }
    const base = await this.baseOf(mutation, current);
    const merge = mergeRecords(base, current, fields);
    const conflict = this.conflictOf(user, replicaId, mutation, 'field', merge.conflicts, '');
    authorize(user, current, merge.merged, current);
    const status: MutationStatus = conflict
      ? 'conflict'
      : mutation.baseRevision === current.revision
        ? 'applied'
        : 'merged';
    const conflicts = withoutResolved(current.conflicts, mutation.resolveConflicts);
    if (conflict) conflict.note = fieldNote(Object.keys(merge.conflicts));
    const nextConflicts = conflict ? [...conflicts, conflict] : conflicts;
    if (merge.changedFields.length === 0 && !conflict && sameConflicts(current, nextConflicts)) {
      // Nothing to change: no revision is made for nothing, and applying it again is harmless.
      return { status, stored: current };
    }
    const now = this.now();
    const next = this.nextRecord(current, merge.merged, nextConflicts, now);
    assertFileLists(next, this.limits.filesPerList);
    next.syncApplied = keptResults(current.syncApplied, now).concat(
      applied(replicaId, mutation, status, next.revision, now, conflict?.conflictId),
    );
    const stored = await this.repository.update(
      current.portfolioId,
      current.revision,
      next,
      this.meta(user, SYNC_COMMAND, recordChanges(current, next)),
    );
    return { status, stored, ...(conflict && { conflictId: conflict.conflictId }) };
  }

  /** Edit against delete: the edit wins, the portfolio comes back with it and a note. */
  private async editDeleted(
    user: Caller,
    replicaId: string,
    mutation: Mutation,
    fields: MergeFields,
    deleted: StoredPortfolio,
  ): Promise<Outcome> {
    assertKnownBase(mutation, deleted);
    const base = await this.baseOf(mutation, deleted);
    const merge = mergeRecords(base, deleted, fields);
    authorize(user, deleted, merge.merged, deleted);
    const conflict = this.conflictOf(user, replicaId, mutation, 'delete', merge.conflicts, '')!;
    conflict.fields.deleted = { base: false, current: true, theirs: false };
    conflict.note =
      `The portfolio was deleted on the hub by ${deleted.modifiedBy} while this edit was made ` +
      'elsewhere; the edit won and brought it back.' +
      (Object.keys(merge.conflicts).length > 0
        ? ` ${fieldNote(Object.keys(merge.conflicts))}`
        : '');
    const now = this.now();
    const back = undeletedPortfolio(deleted, now);
    const next = this.nextRecord(
      deleted,
      merge.merged,
      [...withoutResolved(deleted.conflicts, mutation.resolveConflicts), conflict],
      now,
    );
    next.revision = back.revision;
    assertFileLists(next, this.limits.filesPerList);
    next.syncApplied = keptResults(deleted.syncApplied, now).concat(
      applied(replicaId, mutation, 'conflict', next.revision, now, conflict.conflictId),
    );
    const stored = await this.repository.restoreFromTrash(
      deleted.portfolioId,
      next,
      this.meta(user, SYNC_COMMAND, recordChanges(deleted, next)),
    );
    return { status: 'conflict', stored, conflictId: conflict.conflictId };
  }

  /** A delete: applied at its base; against an edit its replica has not seen, a conflict. */
  private async remove(user: Caller, replicaId: string, mutation: Mutation): Promise<Outcome> {
    const current = await this.repository.get(mutation.portfolioId);
    if (!current)
      throw new Rejection('PORTFOLIO_NOT_FOUND', `No portfolio "${mutation.portfolioId}".`);
    assertKnownBase(mutation, current);
    authorize(user, current, {}, current);
    if ((mutation.baseRevision ?? 0) === current.revision) {
      const entry = await this.repository.delete(
        current.portfolioId,
        current.revision,
        this.meta(user, 'delete', []),
      );
      return {
        status: 'applied',
        stored: { ...entry.snapshot, revision: entry.revision, seq: entry.seq },
      };
    }
    const conflict = this.conflictOf(user, replicaId, mutation, 'delete', {}, '')!;
    conflict.fields.deleted = { base: false, current: false, theirs: true };
    conflict.note =
      `${user.username} deleted this portfolio on another device without having seen the ` +
      `changes made since revision ${mutation.baseRevision ?? 0}; it stays until someone decides.`;
    const now = this.now();
    const next = this.nextRecord(current, current, [...(current.conflicts ?? []), conflict], now);
    next.syncApplied = keptResults(current.syncApplied, now).concat(
      applied(replicaId, mutation, 'conflict', next.revision, now, conflict.conflictId),
    );
    const stored = await this.repository.update(
      current.portfolioId,
      current.revision,
      next,
      this.meta(user, SYNC_COMMAND, recordChanges(current, next)),
    );
    return { status: 'conflict', stored, conflictId: conflict.conflictId };
  }

  /** Brings a portfolio back from the trash; one that is live already stays as it is. */
  private async restore(user: Caller, replicaId: string, mutation: Mutation): Promise<Outcome> {
    const live = await this.repository.get(mutation.portfolioId);
    if (live) {
      authorize(user, live, {}, live);
      return { status: 'applied', stored: live };
    }
    const entry = await this.repository.getTrashed(mutation.portfolioId);
    if (!entry)
      throw new Rejection('PORTFOLIO_NOT_FOUND', `No portfolio "${mutation.portfolioId}".`);
    authorize(user, entry.snapshot, {}, entry.snapshot);
    const now = this.now();
    const next = undeletedPortfolio(entry.snapshot, now);
    next.syncApplied = keptResults(entry.snapshot.syncApplied, now).concat(
      applied(replicaId, mutation, 'applied', next.revision, now),
    );
    const stored = await this.repository.restoreFromTrash(
      mutation.portfolioId,
      next,
      this.meta(user, 'undelete', recordChanges(null, next)),
    );
    return { status: 'applied', stored };
  }

  /** The base snapshot for the merge: the hub's history at baseRevision, or null if pruned. */
  private async baseOf(mutation: Mutation, current: StoredPortfolio): Promise<MergeFields | null> {
    assertKnownBase(mutation, current);
    const baseRevision = mutation.baseRevision;
    if (baseRevision === undefined || baseRevision < 1) return null;
    if (baseRevision === current.revision) return current;
    return (await this.repository.revision(current.portfolioId, baseRevision))?.snapshot ?? null;
  }

  private conflictOf(
    user: Caller,
    replicaId: string,
    mutation: Mutation,
    kind: Conflict['kind'],
    fields: Record<string, FieldConflict>,
    note: string,
  ): Conflict | undefined {
    if (kind === 'field' && Object.keys(fields).length === 0) return undefined;
    return {
      conflictId: `${mutation.portfolioId}.${randomUUID()}`,
      portfolioId: mutation.portfolioId,
      kind,
      createdTime: this.now(),
      by: user.username,
      replicaId,
      mutationId: mutation.mutationId,
      baseRevision: mutation.baseRevision ?? 0,
      fields: { ...fields },
      note,
    };
  }

  private nextRecord(
    current: StoredPortfolio,
    merged: PortfolioRecord,
    conflicts: Conflict[],
    now: number,
  ): PortfolioRecord {
    const {
      seq: _seq,
      createdBy: _c,
      modifiedBy: _m,
      conflicts: _old,
      ...rest
    } = {
      ...current,
      ...pickMerged(merged),
    };
    return {
      ...rest,
      ...(conflicts.length > 0 && { conflicts }),
      modifiedTime: Math.max(now, current.modifiedTime),
      revision: current.revision + 1,
    };
  }

  /**
   * A create's history, checked whole before anything is written: its shape, revisions strictly
   * oldest first and each older than the record, and each revision's record as a create's.
   */
  private checkedHistory(mutation: Mutation): CheckedHistory | undefined {
    if (mutation.history === undefined) return undefined;
    if (mutation.op !== 'create') {
      throw new Rejection('VALIDATION_FAILED', 'Only a create may bring history along.', [
        { field: 'history', message: 'only on a create' },
      ]);
    }
    let history: CreateHistory;
    try {
      history = validateHistory(mutation.history) as CreateHistory;
    } catch (error) {
      throw rejectionOf(error, 'history');
    }
    let previous = 0;
    for (const [index, entry] of history.revisions.entries()) {
      const field = `history.revisions.${index}.revision`;
      if (entry.revision <= previous) {
        throw new Rejection(
          'VALIDATION_FAILED',
          `The history is out of order: revision ${entry.revision} comes after revision ${previous}; revisions go oldest first, each once.`,
          [{ field, message: `must be more than ${previous}` }],
        );
      }
      if (entry.revision >= history.revision) {
        throw new Rejection(
          'VALIDATION_FAILED',
          `The history holds revision ${entry.revision}, which is not older than the portfolio's own revision ${history.revision}.`,
          [{ field, message: `must be less than ${history.revision}` }],
        );
      }
      previous = entry.revision;
    }
    return {
      ...history,
      revisions: history.revisions.map(({ fields, ...stamps }, index) => ({
        ...stamps,
        pushed: this.checkedPushed(fields, 'create', `history.revisions.${index}.fields`),
      })),
    };
  }

  /** The mutation's fields, validated; a create must carry the required ones. */
  private checkedFields(mutation: Mutation): PushedFields {
    if (mutation.op === 'delete' || mutation.op === 'restore') return {};
    return this.checkedPushed(mutation.fields ?? {}, mutation.op, 'fields');
  }

  /** One record's pushed fields, validated; errors name them at `where`. */
  private checkedPushed(
    given: Record<string, unknown>,
    op: Mutation['op'],
    where: string,
  ): PushedFields {
    const raw = Object.fromEntries(Object.entries(given).filter(([key]) => !IGNORED_KEYS.has(key)));
    try {
      const fields = (op === 'create' ? validateCreateFields : validateFields)(raw) as PushedFields;
      if (typeof fields.certificateDesc === 'string')
        fields.certificateDesc = sanitizeHtml(fields.certificateDesc);
      return fields;
    } catch (error) {
      throw rejectionOf(error, where);
    }
  }

  /**
   * The pushed files as the hub stores them: each built from its blob's bytes (DESIGN §5), in the
   * slot it is pushed to, keeping the times of a file this portfolio already holds (live, trashed
   * or at any kept revision is not needed: the same id and bytes in the record now suffice).
   */
  private async withStoredFiles(portfolioId: string, pushed: PushedFields): Promise<MergeFields> {
    if (!FILE_SLOTS.some((slot) => slot in pushed)) return pushed as MergeFields;
    const holder =
      (await this.repository.get(portfolioId)) ??
      (await this.repository.getTrashed(portfolioId))?.snapshot;
    const known = new Map(
      (holder ? filesOf(holder) : []).map((file) => [file.fileId, file] as const),
    );
    const now = this.now();
    const stored = async (slot: FileSlot, ref: PushedFile): Promise<StoredFile> => {
      const originalFilename = cleanFilename(ref.originalFilename);
      const facts = await this.facts(ref.sha256, originalFilename);
      if (facts.size > this.limits.fileBytes) throw tooLarge(this.limits.fileBytes);
      return fileFromBlob(
        slot,
        {
          fileId: ref.fileId,
          sha256: ref.sha256,
          originalFilename,
          description: ref.description ?? known.get(ref.fileId)?.description ?? '',
        },
        facts,
        known.get(ref.fileId),
        now,
      );
    };
    const fields = { ...pushed } as MergeFields;
    if (pushed.cover !== undefined)
      fields.cover = pushed.cover === null ? null : await stored('cover', pushed.cover);
    for (const slot of ['draftingProcess', 'additionalDocument'] as const) {
      const refs = pushed[slot];
      if (refs === undefined) continue;
      if (refs.length > this.limits.filesPerList) {
        throw new ApiError(
          'TOO_MANY_FILES',
          tooManyFiles(slot, refs.length, this.limits.filesPerList),
        );
      }
      const files: StoredFile[] = [];
      for (const ref of refs) files.push(await stored(slot, ref));
      fields[slot] = files;
    }
    return fields;
  }

  /** Every blob the mutation references must be on the hub before a record may point to it. */
  private async assertBlobs(mutation: Mutation, records: PushedFields[]): Promise<void> {
    const referenced = new Set([
      ...(mutation.files ?? []),
      ...records.flatMap((fields) => [
        ...(fields.cover ? [fields.cover.sha256] : []),
        ...(fields.draftingProcess ?? []).map((file) => file.sha256),
        ...(fields.additionalDocument ?? []).map((file) => file.sha256),
      ]),
    ]);
    const missing: string[] = [];
    for (const sha of referenced) if (!(await this.blobs.has(sha))) missing.push(sha);
    if (missing.length > 0) {
      throw new Rejection(
        'BLOBS_MISSING',
        `The hub lacks ${missing.length} file(s) this change refers to; upload them first.`,
        missing.map((sha) => ({ field: 'files', message: sha })),
      );
    }
    const unlisted = [...referenced].filter((sha) => !(mutation.files ?? []).includes(sha));
    if (unlisted.length > 0) mutation.files = [...(mutation.files ?? []), ...unlisted];
  }

  private async rejected(mutation: Mutation, error: unknown): Promise<MutationResult> {
    let code: string;
    let message: string;
    let details: ErrorDetail[] | undefined;
    if (error instanceof Rejection) {
      ({ code, message, details } = error);
    } else {
      const api = error instanceof ApiError ? error : apiErrorOf(error);
      if (!(api instanceof ApiError) || api.statusCode >= 500) throw api;
      // Any refusal of rights is FORBIDDEN to a replica; the message says which.
      code = api.statusCode === 403 ? 'FORBIDDEN' : api.code;
      message = api.message;
      details = api.details.length > 0 ? api.details : undefined;
    }
    const current =
      (await this.repository.get(mutation.portfolioId)) ??
      (await this.repository.getTrashed(mutation.portfolioId))?.snapshot;
    return {
      mutationId: mutation.mutationId,
      status: 'rejected',
      portfolioId: mutation.portfolioId,
      revision: current?.revision ?? 0,
      seq: current?.seq ?? 0,
      error: { code, message, ...(details && { details }) },
    };
  }

  private meta(user: Caller, command: string, fields: string[]): ChangeMeta {
    return { by: user.username, time: this.now(), command, changedFields: fields };
  }

  // ---- Conflicts ----

  /** Every unresolved conflict, newest first, a page at a time (the pageToken is an offset). */
  async listConflicts(
    user: Caller,
    page: { pageSize: number; pageToken?: string | undefined },
  ): Promise<{ conflicts: ConflictListItem[]; total: number; nextPageToken: string }> {
    assertStaff(user);
    const offset = page.pageToken ? Number(page.pageToken) : 0;
    if (!/^\d{0,9}$/.test(page.pageToken ?? '')) {
      throw new ApiError('INVALID_PAGE_TOKEN', undefined, [
        { field: 'querystring.pageToken', message: 'is not a page token of this list' },
      ]);
    }
    // From the repository's index of conflicted portfolios: never a read of every record.
    const conflicted = await this.repository.listConflicted().catch((error: unknown) => {
      throw apiErrorOf(error);
    });
    const all: ConflictListItem[] = conflicted.flatMap((portfolio) =>
      (portfolio.conflicts ?? []).map((conflict) => ({
        ...conflict,
        projectTitle: portfolio.projectTitle,
      })),
    );
    all.sort((a, b) => b.createdTime - a.createdTime || a.conflictId.localeCompare(b.conflictId));
    const conflicts = all.slice(offset, offset + page.pageSize);
    const end = offset + conflicts.length;
    return { conflicts, total: all.length, nextPageToken: end < all.length ? String(end) : '' };
  }

  async portfolioConflicts(user: Caller, portfolioId: string): Promise<Conflict[]> {
    assertStaff(user);
    return (await this.portfolios.get(user, portfolioId)).conflicts ?? [];
  }

  /**
   * Resolves a conflict (DESIGN §10): an update through PortfolioService (command
   * `resolve-conflict`, in history) that sets each conflicting field to the side `keep` names,
   * then `fields` (edited values) over both, and removes the conflict. A delete conflict whose
   * chosen side is "deleted" then moves the portfolio to the trash.
   */
  async resolve(
    user: Caller,
    conflictId: string,
    rawBody: unknown,
    condition: Condition = {},
  ): Promise<StoredPortfolio> {
    assertStaff(user);
    const portfolioId = conflictId.split('.')[0]!;
    const found = await this.repository.get(portfolioId);
    const conflict = found?.conflicts?.find((item) => item.conflictId === conflictId);
    if (!found || !conflict) throw conflictNotFound(conflictId);
    assertMayChange(user, found);
    const body = validateResolve(rawBody);
    let edited: MergeFields = {};
    if (body.fields) {
      try {
        edited = validateFields(
          Object.fromEntries(Object.entries(body.fields).filter(([key]) => isMergedField(key))),
        ) as MergeFields;
      } catch (error) {
        if (error instanceof ApiError)
          throw new ApiError(
            'VALIDATION_FAILED',
            error.message.replace(/^body\b/, 'body.fields'),
            error.details.map((d) => ({ ...d, field: d.field?.replace(/^body\b/, 'body.fields') })),
          );
        throw error;
      }
      const unknown = Object.keys(body.fields).filter((key) => !isMergedField(key));
      if (unknown.length > 0) {
        throw new ApiError(
          'VALIDATION_FAILED',
          `body.fields.${unknown[0]} is not a field a conflict can set`,
          unknown.map((key) => ({
            field: `body.fields.${key}`,
            message: 'is not a content field',
          })),
        );
      }
      if (typeof edited.certificateDesc === 'string')
        edited.certificateDesc = sanitizeHtml(edited.certificateDesc);
      edited = await this.withStoredFiles(portfolioId, edited as PushedFields);
    }
    const expected = expectedRevision(body, condition.ifMatch);
    let deleteAfter = false;
    const stored = await this.portfolios.changeForSync(user, portfolioId, expected, (current) => {
      const open = current.conflicts?.find((item) => item.conflictId === conflictId);
      if (!open) throw conflictNotFound(conflictId);
      const chosen: Record<string, unknown> = {};
      for (const [field, sides] of Object.entries(open.fields)) {
        if (field === 'deleted') {
          deleteAfter = sides[body.keep] === true && !('deleted' in (body.fields ?? {}));
          continue;
        }
        if (isMergedField(field)) chosen[field] = sides[body.keep];
      }
      const values = { ...chosen, ...edited } as MergeFields;
      const remaining = (current.conflicts ?? []).filter((item) => item.conflictId !== conflictId);
      const { conflicts: _all, seq: _s, createdBy: _c, modifiedBy: _m, ...rest } = current;
      const next: PortfolioRecord = {
        ...rest,
        ...values,
        ...(remaining.length > 0 && { conflicts: remaining }),
        modifiedTime: Math.max(this.now(), current.modifiedTime),
        revision: current.revision + 1,
      };
      assertMayChange(user, current, adminParts(current, next));
      return { next, command: RESOLVE_COMMAND };
    });
    if (deleteAfter) {
      await this.portfolios.delete(user, portfolioId, { ifMatch: stored.revision });
    }
    return stored;
  }
}

function assertStaff(user: Caller): void {
  if (!isStaff(user)) throw new ApiError('FORBIDDEN', 'Sync needs the editor or admin role.');
}

function assertKnownBase(mutation: Mutation, current: { revision: number }): void {
  if ((mutation.baseRevision ?? 0) > current.revision) {
    throw new Rejection(
      'UNKNOWN_BASE_REVISION',
      `The hub has revision ${current.revision} of this portfolio, not ${mutation.baseRevision}; pull first.`,
    );
  }
}

/**
 * The rights a change needs, judged on what it really changes: the categories (current and
 * target), admin-only fields and the published/active state (commands) for non-admins.
 */
/** A validation failure of one part of a mutation, told as that part's (`where`). */
function rejectionOf(error: unknown, where: string): Rejection {
  if (!(error instanceof ApiError)) throw error;
  const details = error.details.map((detail) => ({
    ...detail,
    field: detail.field?.replace(/^body\b/, where),
  }));
  return new Rejection(
    'VALIDATION_FAILED',
    error.message.replace(/^body\b/, where),
    details as ErrorDetail[],
  );
}

function authorize(
  user: Caller,
  current: { category: string },
  next: MergeFields,
  before: PortfolioRecord | null,
): void {
  const parts: Record<string, unknown> = { category: next.category ?? current.category };
  const reference =
    before ??
    newPortfolio({ memberBarcode: 'x', category: 'x', projectTitle: 'x', projectDetail: 'x' }, 0);
  for (const field of ['certificateByOrg', 'certificateDesc', 'staffPick'] as const) {
    if (field in next && JSON.stringify(next[field]) !== JSON.stringify(reference[field]))
      parts[field] = next[field];
  }
  for (const field of ['published', 'active'] as const) {
    if (field in next && next[field] !== reference[field]) parts.command = 'publish';
  }
  assertMayChange(user, current, parts);
}

function adminParts(current: PortfolioRecord, next: PortfolioRecord): Record<string, unknown> {
  const parts: Record<string, unknown> = { category: next.category };
  for (const field of ['certificateByOrg', 'certificateDesc', 'staffPick'] as const) {
    if (JSON.stringify(next[field]) !== JSON.stringify(current[field])) parts[field] = next[field];
  }
  if (next.published !== current.published || next.active !== current.active)
    parts.command = 'publish';
  return parts;
}

function pickMerged(record: MergeFields): MergeFields {
  return Object.fromEntries(
    MERGED_FIELDS.filter((field) => field in record).map((field) => [field, record[field]]),
  );
}

function applied(
  replicaId: string,
  mutation: Mutation,
  status: MutationStatus,
  revision: number,
  time: number,
  conflictId?: string,
): AppliedMutation {
  return {
    replicaId,
    mutationId: mutation.mutationId,
    status,
    revision,
    time,
    ...(conflictId && { conflictId }),
  };
}

/** The applied mutations still kept: those of the last 31 days. */
function keptResults(list: AppliedMutation[] | undefined, now: number): AppliedMutation[] {
  return (list ?? []).filter((entry) => entry.time >= now - KEEP_RESULTS_MS);
}

function withoutResolved(conflicts: Conflict[] | undefined, resolved: string[] | undefined) {
  const done = new Set(resolved ?? []);
  return (conflicts ?? []).filter((conflict) => !done.has(conflict.conflictId));
}

function sameConflicts(current: PortfolioRecord, next: Conflict[]): boolean {
  return (current.conflicts ?? []).length === next.length;
}

function fieldNote(fields: string[]): string {
  return `Both sides changed ${fields.join(', ')}; the hub kept its value${fields.length > 1 ? 's' : ''}.`;
}

function conflictNotFound(conflictId: string): ApiError {
  return new ApiError('CONFLICT_NOT_FOUND', `No open conflict "${conflictId}".`);
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** A mutation's blob list names blobs by SHA-256 only: anything else refuses that mutation. */
function assertBlobNames(files: string[]): void {
  const bad = files.flatMap((sha, index) => (SHA256_HEX.test(sha) ? [] : [index]));
  if (bad.length === 0) return;
  throw new Rejection(
    'VALIDATION_FAILED',
    `files[${bad[0]}] is not a SHA-256: a blob is named by 64 lower-case hexadecimal digits.`,
    bad.map((index) => ({
      field: `files[${index}]`,
      message: 'must be 64 lower-case hexadecimal digits',
    })),
  );
}
