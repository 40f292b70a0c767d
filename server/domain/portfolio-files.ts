import {
  type FileKind,
  type FileSlot,
  type PortfolioRecord,
  type StoredFile,
  capitalized,
  fileKindName,
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
