import {
  type FileKind,
  type FileSlot,
  type PortfolioRecord,
  type StoredFile,
  capitalized,
  fileKindName,
  isRasterImage,
} from '../../shared';
import { ApiError } from '../errors';

/** What each slot accepts (DESIGN §5); anything else is a 415. */
export const SLOT_KINDS: Record<FileSlot, ReadonlySet<FileKind>> = {
  cover: new Set(['image']),
  draftingProcess: new Set(['image', 'pdf']),
  additionalDocument: new Set(['image', 'pdf', 'office', 'text', 'archive']),
};

/** Each slot in words, as a refusal names it. */
const SLOT_NAMES: Record<FileSlot, string> = {
  cover: 'the cover',
  draftingProcess: 'a drafting-process file',
  additionalDocument: 'an additional document',
};
const LIST_NAMES: Record<FileSlot, string> = {
  cover: 'The cover',
  draftingProcess: 'The drafting process',
  additionalDocument: 'The additional documents',
};

const IMAGES = 'an image (JPEG, PNG, WebP, GIF, AVIF or TIFF)';
const SLOT_ACCEPTS: Record<FileSlot, string> = {
  cover: IMAGES,
  draftingProcess: `${IMAGES} or a PDF`,
  additionalDocument:
    'a PDF, a Word, Excel or PowerPoint file, an OpenDocument or rich-text file, plain text, a CSV table, a zip archive or an image',
};

/** Refuses a kind the slot does not take, naming the kind in words (never its MIME type). */
export function assertAccepted(
  slot: FileSlot,
  kind: FileKind,
  mimeType: string,
  extension?: string,
): void {
  if (!SLOT_KINDS[slot].has(kind)) {
    throw new ApiError(
      'UNSUPPORTED_FILE_TYPE',
      `${capitalized(fileKindName(mimeType, extension))} cannot be used as ${SLOT_NAMES[slot]}; choose ${SLOT_ACCEPTS[slot]}.`,
    );
  }
}

/** The refusal of a list of `count` files where at most `limit` fit, in words. */
export function tooManyFiles(slot: FileSlot, count: number, limit: number): string {
  return `${LIST_NAMES[slot]} would hold ${count} files; at most ${limit} are allowed.`;
}

/**
 * A list slot that is already full refuses another file before any byte is read; one that has
 * room for fewer than the `adding` files of one upload refuses them all.
 */
export function assertRoom(
  record: PortfolioRecord,
  slot: FileSlot,
  filesPerList: number,
  adding = 1,
): void {
  if (slot === 'cover') return;
  if (record[slot].length >= filesPerList) {
    throw new ApiError(
      'TOO_MANY_FILES',
      `${LIST_NAMES[slot]} already holds ${record[slot].length} files, the most allowed; delete one to add another.`,
    );
  }
  if (record[slot].length + adding > filesPerList) {
    throw new ApiError(
      'TOO_MANY_FILES',
      tooManyFiles(slot, record[slot].length + adding, filesPerList),
    );
  }
}

export interface FoundFile {
  slot: FileSlot;
  file: StoredFile;
}

/** Every file of a record: the cover, then the two lists. */
export function filesOf(record: PortfolioRecord): StoredFile[] {
  return [
    ...(record.cover ? [record.cover] : []),
    ...record.draftingProcess,
    ...record.additionalDocument,
  ];
}

export function findFile(record: PortfolioRecord, fileId: string): FoundFile | null {
  if (record.cover?.fileId === fileId) return { slot: 'cover', file: record.cover };
  for (const slot of ['draftingProcess', 'additionalDocument'] as const) {
    const file = record[slot].find((item) => item.fileId === fileId);
    if (file) return { slot, file };
  }
  return null;
}

/** Every file change is an update of the portfolio: revision + 1 and a new modifiedTime. */
function touched(record: PortfolioRecord, now: number): PortfolioRecord {
  return {
    ...record,
    modifiedTime: Math.max(now, record.modifiedTime),
    revision: record.revision + 1,
  };
}

/** Sets the cover or appends to a list; returns the file it replaced (the old cover), if any. */
export function withAddedFile(
  record: PortfolioRecord,
  slot: FileSlot,
  file: StoredFile,
  now: number,
): { next: PortfolioRecord; replaced: StoredFile | null } {
  if (slot === 'cover')
    return { next: touched({ ...record, cover: file }, now), replaced: record.cover };
  return { next: touched({ ...record, [slot]: [...record[slot], file] }, now), replaced: null };
}

/** Appends several files to a list as one change (one revision). */
export function withAddedFiles(
  record: PortfolioRecord,
  slot: Exclude<FileSlot, 'cover'>,
  files: StoredFile[],
  now: number,
): PortfolioRecord {
  return touched({ ...record, [slot]: [...record[slot], ...files] }, now);
}

/** Applies `change` to the file `fileId`, or removes it when `change` returns null. */
export function withChangedFile(
  record: PortfolioRecord,
  fileId: string,
  change: (file: StoredFile) => StoredFile | null,
  now: number,
): PortfolioRecord {
  const apply = (file: StoredFile) => (file.fileId === fileId ? change(file) : file);
  return touched(
    {
      ...record,
      cover: record.cover && apply(record.cover),
      draftingProcess: record.draftingProcess.map(apply).filter((file) => file !== null),
      additionalDocument: record.additionalDocument.map(apply).filter((file) => file !== null),
    },
    now,
  );
}

/** The refusal of a body whose `fileIds` are wrong, in words, on `body.fileIds`. */
function badFileIds(message: string): ApiError {
  return new ApiError('VALIDATION_FAILED', message, [{ field: 'body.fileIds', message }]);
}

/**
 * The drafting process in the order `fileIds` gives: it must name every drafting-process file
 * exactly once, so a reorder never adds, drops or doubles a file (a list another person changed
 * meanwhile is refused, not merged).
 */
export function withReorderedDrafting(
  record: PortfolioRecord,
  fileIds: readonly string[],
  now: number,
): PortfolioRecord {
  const byId = new Map(record.draftingProcess.map((file) => [file.fileId, file]));
  const seen = new Set<string>();
  for (const fileId of fileIds) {
    if (seen.has(fileId)) throw badFileIds('The new order names one drafting image twice.');
    if (!byId.has(fileId)) {
      throw badFileIds(
        'The new order names a file that is not among the drafting images; reload the page and order them again.',
      );
    }
    seen.add(fileId);
  }
  const missing = record.draftingProcess.length - seen.size;
  if (missing > 0) {
    throw badFileIds(
      `The new order leaves out ${missing === 1 ? 'one drafting image' : `${missing} drafting images`}; reload the page and order them again.`,
    );
  }
  return touched({ ...record, draftingProcess: fileIds.map((fileId) => byId.get(fileId)!) }, now);
}

/**
 * A drafting image becomes the cover, and the old cover takes its place among the drafting
 * images (nothing is lost, and choosing the old cover again undoes it). Only images can be
 * the cover. (The service answers a choice of the cover itself without a change.)
 */
export function withCoverFromDrafting(
  record: PortfolioRecord,
  fileId: string,
  now: number,
): PortfolioRecord {
  if (record.cover?.fileId === fileId) return touched(record, now);
  const index = record.draftingProcess.findIndex((file) => file.fileId === fileId);
  if (index < 0) {
    throw new ApiError(
      'VALIDATION_FAILED',
      'Only a drafting image can be made the cover; this file is an additional document.',
      [{ field: 'params.fileId', message: 'not a drafting image' }],
    );
  }
  const chosen = record.draftingProcess[index]!;
  const kind = isRasterImage(chosen.mimeType) ? 'image' : 'other';
  assertAccepted('cover', kind, chosen.mimeType, chosen.fullFileExtension);
  const draftingProcess = [...record.draftingProcess];
  if (record.cover) draftingProcess.splice(index, 1, record.cover);
  else draftingProcess.splice(index, 1);
  return touched({ ...record, cover: chosen, draftingProcess }, now);
}

/** One description for several files, each file's modifiedTime moved on; one revision. */
export function withDescribedFiles(
  record: PortfolioRecord,
  fileIds: readonly string[],
  description: string,
  now: number,
): PortfolioRecord {
  const wanted = new Set(fileIds);
  const describe = (file: StoredFile): StoredFile =>
    wanted.has(file.fileId) && file.description !== description
      ? { ...file, description, modifiedTime: Math.max(now, file.modifiedTime) }
      : file;
  return touched(
    {
      ...record,
      cover: record.cover && describe(record.cover),
      draftingProcess: record.draftingProcess.map(describe),
      additionalDocument: record.additionalDocument.map(describe),
    },
    now,
  );
}

/**
 * A file as a sync mutation, an import or an ingest names it (DESIGN §5): a blob the server
 * holds, by its sha256, with the only parts a client may give, its name and description.
 */
export interface FileRef {
  fileId: string;
  sha256: string;
  /** Already cleaned as an upload's name is. */
  originalFilename: string;
  description: string;
}

/** What the server read from a blob's bytes (media/blob-facts.ts), as plain data. */
export interface FileFacts {
  size: number;
  md5: string;
  mimeType: string;
  extension: string;
  kind: FileKind;
  dimention: { width: number; height: number } | null;
}

/**
 * The stored file a reference stands for in `slot`: every field the bytes decide comes from
 * `facts`, never from the client. A file the portfolio already holds with the same id and bytes
 * (`known`) keeps its creation time; when nothing differs it is that very object, so a merge sees
 * no change where there is none.
 */
export function fileFromBlob(
  slot: FileSlot,
  ref: FileRef,
  facts: FileFacts,
  known: StoredFile | undefined,
  now: number,
): StoredFile {
  assertAccepted(slot, facts.kind, facts.mimeType, facts.extension);
  const same = known?.sha256 === ref.sha256 ? known : undefined;
  const file: StoredFile = {
    fileId: ref.fileId,
    originalFilename: ref.originalFilename,
    fullFileExtension: facts.extension,
    mimeType: facts.mimeType,
    description: ref.description,
    createdTime: same?.createdTime ?? now,
    modifiedTime: same?.modifiedTime ?? now,
    md5Checksum: facts.md5,
    sha256: ref.sha256,
    size: facts.size,
    dimention: facts.dimention,
  };
  if (!same) return file;
  const unchanged = (Object.keys(file) as Array<keyof StoredFile>).every(
    (key) => JSON.stringify(file[key]) === JSON.stringify(same[key]),
  );
  return unchanged ? same : { ...file, modifiedTime: Math.max(now, same.modifiedTime) };
}

/** Each list within its limit, and no file id twice in one portfolio: on every path a file takes. */
export function assertFileLists(record: PortfolioRecord, filesPerList: number): void {
  for (const slot of ['draftingProcess', 'additionalDocument'] as const) {
    if (record[slot].length > filesPerList) {
      throw new ApiError('TOO_MANY_FILES', tooManyFiles(slot, record[slot].length, filesPerList));
    }
  }
  const seen = new Set<string>();
  for (const file of filesOf(record)) {
    if (seen.has(file.fileId)) {
      throw new ApiError('VALIDATION_FAILED', `The file id "${file.fileId}" is used twice.`, [
        { field: 'fields.files', message: `file id "${file.fileId}" appears more than once` },
      ]);
    }
    seen.add(file.fileId);
  }
}

/** Does the record hold these bytes in this slot already (an ingest run again)? */
export function holds(record: PortfolioRecord | null, slot: FileSlot, sha256: string): boolean {
  if (!record) return false;
  if (slot === 'cover') return record.cover?.sha256 === sha256;
  return record[slot].some((file) => file.sha256 === sha256);
}

/**
 * Adds the files of an ingest the record does not hold yet, as one change: a new cover replaces
 * the old one, list files are appended in order. Answers the next record (untouched, the same
 * object, when nothing was added), the files added and the cover replaced.
 */
export function withIngestedFiles(
  record: PortfolioRecord,
  files: ReadonlyArray<{ slot: FileSlot; file: StoredFile }>,
  now: number,
): { next: PortfolioRecord; added: StoredFile[]; replaced: StoredFile | null } {
  let next = record;
  const added: StoredFile[] = [];
  for (const { slot, file } of files) {
    if (holds(next, slot, file.sha256)) continue;
    next = slot === 'cover' ? { ...next, cover: file } : { ...next, [slot]: [...next[slot], file] };
    added.push(file);
  }
  if (added.length === 0) return { next: record, added, replaced: null };
  const replaced = record.cover && next.cover !== record.cover ? record.cover : null;
  return { next: touched(next, now), added, replaced };
}
