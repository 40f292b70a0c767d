/**
 * Three-way merge of portfolio records (DESIGN §10): what one side (`theirs`, a replica's edit)
 * changed since a common `base` is applied to the other side's `current` record field by field.
 * Pure: no clocks, no ids, no I/O. The hub merges pushed mutations with it; a replica merges
 * pulled records with its pending edits with the same functions.
 *
 * Rules:
 * - A field only one side changed takes that side's value; a field both sides changed to the
 *   same value is no conflict.
 * - Tag lists (`relativeCategory`, `occasion`, `referenceStyling`, `generalTag`,
 *   `certificateByOrg`) merge as sets: the tags theirs added since base are appended to
 *   current's list (current's order first), the tags theirs removed are removed. Nothing either
 *   side added is lost.
 * - Files are compared by what a client may set (DESIGN §5): id, bytes (sha256), name and
 *   description. The rest (size, type, md5, times) is what the server computed from the bytes;
 *   two copies of one file that differ only there are the same file.
 * - File lists (`draftingProcess`, `additionalDocument`) merge as sets by `fileId` the same
 *   way; a file both sides kept takes theirs' name and description only when current left them
 *   as at base; both changed them differently → a conflict of the list.
 * - `cover` is one value.
 * - Any other field changed on both sides to different values is a conflict: `merged` keeps
 *   current's value and `conflicts` names the base, current and theirs values.
 * - Without a base (pruned from history: `base` null), every field theirs sends that differs
 *   from current is a conflict: nothing is ever overwritten silently.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  fieldKeysWhere,
  fieldKeysWith,
  type KeysWith,
  type PortfolioRecord,
  type StoredFile,
} from '../../shared';

/** The fields a merge considers: content and state, never identity or bookkeeping. */
export const MERGED_FIELDS = fieldKeysWhere(
  (row) => row.part === 'content' || row.part === 'state',
) as Array<KeysWith<'part', 'content' | 'state'>>;

export type MergedField = (typeof MERGED_FIELDS)[number];

/** Lists merged as sets (additions and removals of both sides kept). */
export const TAG_LIST_FIELDS = fieldKeysWith('kind', 'tags');

/** Lists of files merged by file id. */
export const FILE_LIST_FIELDS = fieldKeysWith('kind', 'files');

/** The merged fields of a record; a mutation's `fields` is such a partial record. */
export type MergeFields = Partial<Pick<PortfolioRecord, MergedField>>;

export interface FieldConflict {
  base: unknown;
  current: unknown;
  theirs: unknown;
}

export interface MergeResult<T extends MergeFields> {
  /** `current` with theirs' changes applied where they do not conflict. */
  merged: T;
  /** Fields both sides changed differently; `merged` keeps current's value for each. */
  conflicts: Record<string, FieldConflict>;
  /** The fields where `merged` differs from `current`. */
  changedFields: MergedField[];
}

const tagLists = new Set<string>(TAG_LIST_FIELDS);
const fileLists = new Set<string>(FILE_LIST_FIELDS);
const mergedFields = new Set<string>(MERGED_FIELDS);

export function isMergedField(key: string): key is MergedField {
  return mergedFields.has(key);
}

/** Two values of `field` are the same: files by what a client may set of them (see above). */
export function sameValue(field: string, a: unknown, b: unknown): boolean {
  if (field === 'cover') return fileKey(a) === fileKey(b);
  if (fileLists.has(field) && Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((file, i) => fileKey(file) === fileKey(b[i]));
  }
  return isDeepStrictEqual(a, b);
}

/** A file as a client names it: id, bytes, name and description; null for no file. */
function fileKey(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const file = value as Partial<StoredFile>;
  return JSON.stringify([file.fileId, file.sha256, file.originalFilename, file.description]);
}

/** The merged fields whose values differ between `base` and `next` (all `next` has, if no base). */
export function changedFields(base: MergeFields | null, next: MergeFields): MergedField[] {
  return MERGED_FIELDS.filter(
    (field) =>
      field in next &&
      (base === null || !(field in base) || !sameValue(field, base[field], next[field])),
  );
}

/**
 * Merges what `theirs` changed since `base` into `current`. `theirs` may be a whole record or
 * only the fields its side changed (a mutation's `fields`): a field it leaves out, or sends at
 * its base value, is one it did not change.
 */
export function mergeRecords<T extends MergeFields>(
  base: MergeFields | null,
  current: T,
  theirs: MergeFields,
): MergeResult<T> {
  const merged: Record<string, unknown> = { ...current };
  const conflicts: Record<string, FieldConflict> = {};
  for (const field of MERGED_FIELDS) {
    if (!(field in theirs)) continue;
    const t = theirs[field];
    const c = current[field];
    if (sameValue(field, c, t)) continue;
    if (base === null) {
      conflicts[field] = { base: null, current: c, theirs: t };
      continue;
    }
    const b = base[field];
    if (sameValue(field, t, b)) continue; // theirs did not change it
    if (sameValue(field, c, b)) {
      merged[field] = t; // only theirs changed it
      continue;
    }
    if (tagLists.has(field)) {
      merged[field] = mergeTags(b as string[], c as string[], t as string[]);
    } else if (fileLists.has(field)) {
      const files = mergeFiles(b as StoredFile[], c as StoredFile[], t as StoredFile[]);
      if (files) merged[field] = files;
      else conflicts[field] = { base: b, current: c, theirs: t };
    } else {
      conflicts[field] = { base: b, current: c, theirs: t };
    }
  }
  const changed = MERGED_FIELDS.filter(
    (field) => field in current && !isDeepStrictEqual(current[field], merged[field]),
  );
  return { merged: merged as T, conflicts, changedFields: changed };
}

/** current's tags, minus those theirs removed since base, plus those theirs added. */
export function mergeTags(base: string[], current: string[], theirs: string[]): string[] {
  const before = new Set(base);
  const after = new Set(theirs);
  const removed = new Set(base.filter((tag) => !after.has(tag)));
  const kept = current.filter((tag) => !removed.has(tag));
  const seen = new Set(kept);
  for (const tag of theirs) {
    if (!before.has(tag) && !seen.has(tag)) {
      kept.push(tag);
      seen.add(tag);
    }
  }
  return kept;
}

/**
 * File lists as sets by fileId, like tags. A file both sides kept takes theirs' version when
 * current left it as at base; null when both changed one file's name or description differently.
 */
export function mergeFiles(
  base: StoredFile[],
  current: StoredFile[],
  theirs: StoredFile[],
): StoredFile[] | null {
  const baseById = new Map(base.map((file) => [file.fileId, file]));
  const theirsById = new Map(theirs.map((file) => [file.fileId, file]));
  const result: StoredFile[] = [];
  for (const file of current) {
    const before = baseById.get(file.fileId);
    const after = theirsById.get(file.fileId);
    if (before && !after) continue; // theirs removed it
    if (before && after && fileKey(before) !== fileKey(after)) {
      if (fileKey(file) === fileKey(before)) {
        result.push(after);
        continue;
      }
      if (fileKey(file) !== fileKey(after)) return null;
    }
    result.push(file);
  }
  const seen = new Set(result.map((file) => file.fileId));
  for (const file of theirs) {
    if (!baseById.has(file.fileId) && !seen.has(file.fileId)) {
      result.push(file);
      seen.add(file.fileId);
    }
  }
  return result;
}
