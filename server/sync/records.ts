import {
  ChangeStampsSchema,
  fieldKeysWhere,
  type Conflict,
  type CreateHistory,
  type Mutation,
  type PortfolioRecord,
  type StoredFile,
} from '../../shared';
import {
  FILE_LIST_FIELDS,
  MERGED_FIELDS,
  mergeRecords,
  sameValue,
  type FieldConflict,
  type MergeFields,
} from '../domain/three-way-merge';

/**
 * Pure helpers of the replica (DESIGN §10): the hub's feed item as a stored record, the fields a
 * local edit changed, and the three-way merge of a pending local edit with a hub change.
 */

/** A stored record as sync handles it, possibly carrying the hub's `conflicts`. */
export type SyncRecord = PortfolioRecord & {
  createdBy?: string;
  modifiedBy?: string;
  seq?: number;
};

export type { Conflict };

/**
 * Left out of a create's fields: stamped or kept by the hub — the change stamps and the field
 * table's bookkeeping, but for the times, which travel with the portfolio.
 */
const NOT_CREATED = new Set<string>([
  ...fieldKeysWhere((row) => row.part === 'bookkeeping' && row.kind !== 'time'),
  ...Object.keys(ChangeStampsSchema.properties),
]);

/** The fields of `record` for a create mutation (stored-record names, file metadata objects). */
export function createFields(record: SyncRecord): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([key]) => !NOT_CREATED.has(key)));
}

/** The most older revisions a create brings along (CreateHistorySchema's maxItems). */
const HISTORY_MAX = 1000;

/**
 * The history a create brings to the hub (DESIGN §10, §11): the portfolio's creation, the stamps
 * of its current revision and its older kept revisions (oldest first), each record as a create's
 * fields. `kept` is this library's history of it, in any order; the current one may be missing.
 */
export function createHistory(
  record: SyncRecord,
  kept: ReadonlyArray<{
    revision: number;
    modifiedTime: number;
    modifiedBy: string;
    command: string;
    changedFields: string[];
    snapshot: SyncRecord;
  }>,
): CreateHistory {
  const ascending = [...kept].sort((a, b) => a.revision - b.revision);
  const own = ascending.find((entry) => entry.revision === record.revision);
  const stamps = (entry: (typeof kept)[number]) => ({
    revision: entry.revision,
    modifiedTime: entry.modifiedTime,
    modifiedBy: entry.modifiedBy,
    command: entry.command,
    changedFields: entry.changedFields,
  });
  return {
    createdTime: record.createdTime,
    createdBy: record.createdBy ?? '',
    revision: record.revision,
    modifiedTime: record.modifiedTime,
    modifiedBy: own?.modifiedBy ?? record.modifiedBy ?? '',
    command: own?.command ?? 'create',
    changedFields: own?.changedFields ?? [],
    revisions: ascending
      .filter((entry) => entry.revision < record.revision)
      // The hub takes at most this many (CreateHistorySchema): the newest of them travel.
      .slice(-HISTORY_MAX)
      .map((entry) => ({ ...stamps(entry), fields: createFields(entry.snapshot) })),
  };
}

/** Every blob a create's history refers to. */
export function filesInHistory(history: CreateHistory): string[] {
  return history.revisions.flatMap((entry) => filesIn(entry.fields));
}

/** Content fields whose values differ from `reference` to `record`, with `record`'s values. */
export function changedFields(
  reference: Partial<SyncRecord> | null | undefined,
  record: Partial<SyncRecord>,
): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const key of MERGED_FIELDS) {
    const value = record[key];
    const before = reference?.[key];
    // Files by what a client may set: what the hub computed of them is no change made here.
    if (!sameValue(key, value, before)) fields[key] = value ?? null;
  }
  return fields;
}

/** Every blob sha256 that the given fields refer to. */
export function filesIn(fields: Record<string, unknown>): string[] {
  const shas = new Set<string>();
  const cover = fields.cover as StoredFile | null | undefined;
  if (cover?.sha256) shas.add(cover.sha256);
  for (const slot of FILE_LIST_FIELDS) {
    for (const file of (fields[slot] as StoredFile[] | undefined) ?? []) shas.add(file.sha256);
  }
  return [...shas];
}

export function filesOfRecord(record: SyncRecord): string[] {
  return filesIn(record as unknown as Record<string, unknown>);
}

export interface MergeResult {
  /** `current` with mine applied where it does not collide. */
  merged: Record<string, unknown>;
  /** Same field changed on both sides to different values: current kept, mine is `theirs`. */
  conflicts: Record<string, FieldConflict>;
}

/**
 * Three-way merge by field, the hub's own rule (server/domain/three-way-merge.ts): `mine` are
 * the fields a pending local edit changed since `base`, `current` is the hub's record now.
 */
export function mergeFields(
  base: Record<string, unknown> | null,
  mine: Record<string, unknown>,
  current: Record<string, unknown>,
): MergeResult {
  const { merged, conflicts } = mergeRecords(
    base as MergeFields | null,
    current as MergeFields,
    mine as MergeFields,
  );
  return { merged: merged as Record<string, unknown>, conflicts };
}

/**
 * The feed's portfolio (the detail shape plus `seq`, `fileHashes` and `conflicts`) as the record
 * the hub stores: interface spellings back to stored names, each file with its sha256.
 */
export function recordFromFeed(portfolio: Record<string, unknown>): SyncRecord {
  const {
    oboutProject,
    createdDate,
    cover,
    draftingProcess,
    additionalDocument,
    seq: _seq,
    fileHashes,
    ...same
  } = portfolio as Record<string, unknown> & { fileHashes?: Record<string, string> };
  const hashes = fileHashes ?? {};
  const stored = (file: Record<string, unknown>, id: string): StoredFile => {
    const { fileID: _id, data: _data, ...rest } = file;
    const sha256 = hashes[id];
    if (!sha256) throw new Error(`The hub's feed gives no sha256 for file ${id}`);
    return { ...(rest as Omit<StoredFile, 'fileId' | 'sha256'>), fileId: id, sha256 };
  };
  const list = (files: unknown) =>
    ((files as Record<string, unknown>[] | undefined) ?? []).map((file) =>
      stored(file, String(file.fileID ?? file.fileId)),
    );
  const record = {
    ...same,
    aboutProject: oboutProject,
    createdTime: createdDate,
    cover: cover
      ? stored(cover as Record<string, unknown>, String((cover as { fileId: string }).fileId))
      : null,
    draftingProcess: list(draftingProcess),
    additionalDocument: list(additionalDocument),
  } as SyncRecord;
  if (!record.conflicts || record.conflicts.length === 0) delete record.conflicts;
  return record;
}

/** The record without sync's own and the store's stamps, for comparing contents. */
export function contentOf(record: SyncRecord): Record<string, unknown> {
  const { seq: _seq, ...rest } = record;
  return rest;
}

/** A file as a mutation names it (DESIGN §5): the hub computes everything else from the bytes. */
function fileRef(file: StoredFile) {
  return {
    fileId: file.fileId,
    sha256: file.sha256,
    originalFilename: file.originalFilename,
    description: file.description,
  };
}

/** A mutation as it is sent: each file named by its blob, its name and its description only. */
export function onTheWire<M extends Pick<Mutation, 'fields' | 'history'>>(mutation: M): M {
  const history = mutation.history as CreateHistory | undefined;
  const out = { ...mutation, ...(mutation.fields && { fields: fieldsOnTheWire(mutation.fields) }) };
  if (history) {
    out.history = {
      ...history,
      revisions: history.revisions.map((entry) => ({
        ...entry,
        fields: fieldsOnTheWire(entry.fields),
      })),
    };
  }
  return out;
}

function fieldsOnTheWire(fields: Record<string, unknown>): Record<string, unknown> {
  if (!('cover' in fields || FILE_LIST_FIELDS.some((slot) => slot in fields))) return fields;
  const wire: Record<string, unknown> = { ...fields };
  if (fields.cover) wire.cover = fileRef(fields.cover as StoredFile);
  for (const slot of FILE_LIST_FIELDS) {
    if (Array.isArray(fields[slot])) wire[slot] = (fields[slot] as StoredFile[]).map(fileRef);
  }
  return wire;
}
