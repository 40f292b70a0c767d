import { isDeepStrictEqual } from 'node:util';
import type { PortfolioRecord, StoredFile } from '../../shared';

/**
 * Pure helpers of the replica (DESIGN §10): the hub's feed item as a stored record, the fields a
 * local edit changed, and the three-way merge of a pending local edit with a hub change.
 */

/** A stored record as sync handles it, possibly carrying the hub's `conflicts`. */
export type SyncRecord = PortfolioRecord & {
  createdBy?: string;
  modifiedBy?: string;
  seq?: number;
  conflicts?: Conflict[];
};

export interface Conflict {
  conflictId: string;
  portfolioId: string;
  kind: 'field' | 'delete';
  createdTime: number;
  by: string;
  replicaId: string;
  mutationId: string;
  baseRevision: number;
  fields: Record<string, { base: unknown; current: unknown; theirs: unknown }>;
  note: string;
}

/** Tag lists merge as sets; file lists as sets by fileId (the hub's rule). */
export const TAG_LISTS = new Set([
  'relativeCategory',
  'occasion',
  'referenceStyling',
  'generalTag',
  'certificateByOrg',
]);
export const FILE_LISTS = new Set(['draftingProcess', 'additionalDocument']);

/** Kept by each side itself: never part of a mutation's changed fields. */
const SYSTEM_FIELDS = new Set([
  'portfolioId',
  'revision',
  'seq',
  'createdBy',
  'modifiedBy',
  'createdTime',
  'modifiedTime',
  'conflicts',
]);
/** Left out of a create's fields: stamped by the hub. */
const NOT_CREATED = new Set(['revision', 'seq', 'createdBy', 'modifiedBy', 'conflicts']);

/** The fields of `record` for a create mutation (stored-record names, file metadata objects). */
export function createFields(record: SyncRecord): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([key]) => !NOT_CREATED.has(key)));
}

/** Top-level fields whose values differ from `reference` to `record`, with `record`'s values. */
export function changedFields(
  reference: Partial<SyncRecord> | null | undefined,
  record: SyncRecord,
): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const keys = new Set([...Object.keys(reference ?? {}), ...Object.keys(record)]);
  for (const key of keys) {
    if (SYSTEM_FIELDS.has(key)) continue;
    const value = (record as Record<string, unknown>)[key];
    const before = (reference as Record<string, unknown> | null | undefined)?.[key];
    if (!isDeepStrictEqual(value, before)) fields[key] = value ?? null;
  }
  return fields;
}

/** Every blob sha256 that the given fields refer to. */
export function filesIn(fields: Record<string, unknown>): string[] {
  const shas = new Set<string>();
  const cover = fields.cover as StoredFile | null | undefined;
  if (cover?.sha256) shas.add(cover.sha256);
  for (const slot of FILE_LISTS) {
    for (const file of (fields[slot] as StoredFile[] | undefined) ?? []) shas.add(file.sha256);
  }
  return [...shas];
}

export function filesOfRecord(record: SyncRecord): string[] {
  return filesIn(record as unknown as Record<string, unknown>);
}

function mergeSet<T>(base: T[], mine: T[], theirs: T[], key: (item: T) => string): T[] {
  const baseKeys = new Set(base.map(key));
  const mineKeys = new Set(mine.map(key));
  const removed = new Set([...baseKeys].filter((k) => !mineKeys.has(k)));
  const result = theirs.filter((item) => !removed.has(key(item)));
  const have = new Set(result.map(key));
  for (const item of mine) {
    if (!baseKeys.has(key(item)) && !have.has(key(item))) {
      result.push(item);
      have.add(key(item));
    }
  }
  return result;
}

export interface MergeResult {
  /** `theirs` with mine applied where it does not collide. */
  merged: Record<string, unknown>;
  /** Same field changed on both sides to different values: theirs kept, mine in `theirs`. */
  conflicts: Record<string, { base: unknown; current: unknown; theirs: unknown }>;
}

/**
 * Three-way merge by field: `mine` are the fields a pending local edit changed since `base`,
 * `current` is the hub's record now. The hub's rule: disjoint fields merge, tag and file lists
 * merge as sets, the same scalar field changed to different values keeps the hub's value and is
 * a conflict (mine is `theirs`). Nothing is decided by time.
 */
export function mergeFields(
  base: Record<string, unknown> | null,
  mine: Record<string, unknown>,
  current: Record<string, unknown>,
): MergeResult {
  const merged: Record<string, unknown> = { ...current };
  const conflicts: MergeResult['conflicts'] = {};
  for (const [field, value] of Object.entries(mine)) {
    const before = base?.[field];
    const now = current[field];
    if (isDeepStrictEqual(value, now)) continue;
    if (base && isDeepStrictEqual(before, now)) {
      merged[field] = value;
    } else if (TAG_LISTS.has(field)) {
      merged[field] = mergeSet(
        (before as string[] | undefined) ?? [],
        (value as string[] | null) ?? [],
        (now as string[] | undefined) ?? [],
        (tag) => tag,
      );
    } else if (FILE_LISTS.has(field)) {
      merged[field] = mergeSet(
        (before as StoredFile[] | undefined) ?? [],
        (value as StoredFile[] | null) ?? [],
        (now as StoredFile[] | undefined) ?? [],
        (file) => file.fileId,
      );
    } else {
      conflicts[field] = { base: before ?? null, current: now ?? null, theirs: value };
    }
  }
  return { merged, conflicts };
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
