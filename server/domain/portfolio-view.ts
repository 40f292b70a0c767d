import {
  ECHO_KEYS,
  type CoverFile,
  type FileSlot,
  type ListFile,
  type PortfolioCreated,
  type PortfolioDetail,
  type PortfolioRecord,
  type PortfolioUpdated,
  type StoredFile,
  type StoredPortfolioRecord,
} from '../../shared';

function pick<T, K extends keyof T>(record: T, keys: readonly K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((key) => [key, record[key]])) as Pick<T, K>;
}

export const createdView = (record: PortfolioRecord): PortfolioCreated =>
  pick(record, [...ECHO_KEYS, 'createdTime']);
export const updatedView = (record: PortfolioRecord): PortfolioUpdated =>
  pick(record, [...ECHO_KEYS, 'modifiedTime']);

/** The File object of the interface, without `data` (the sha256 stays internal). */
export function coverFileView({ sha256: _sha, ...file }: StoredFile): CoverFile {
  return file;
}

export function listFileView({ sha256: _sha, fileId, ...file }: StoredFile): ListFile {
  return { fileID: fileId, ...file };
}

/** A file as upload and file-change answers show it: the cover's or a list item's spelling. */
export function fileView(slot: FileSlot, file: StoredFile): CoverFile | ListFile {
  return slot === 'cover' ? coverFileView(file) : listFileView(file);
}

/**
 * A file's `data` as the answer object holds it: a placeholder the response writer replaces with
 * the base64 bytes as it streams them (server/http/inline-data-response.ts).
 */
export type FileDataOf = (file: StoredFile) => string;

/** Which file slots of the detail get their `data`; reading bytes is the costly part. */
export interface FileDataSelection {
  cover?: boolean;
  draftingProcess?: boolean;
  additionalDocument?: boolean;
}

const ALL_FILE_DATA: FileDataSelection = {
  cover: true,
  draftingProcess: true,
  additionalDocument: true,
};

/** The detail answer with `data` (from `dataOf`) for the selected slots (all by default). */
export function detailViewWithData(
  record: StoredPortfolioRecord,
  dataOf: FileDataOf,
  select: FileDataSelection = ALL_FILE_DATA,
): PortfolioDetail {
  const view = detailView(record);
  if (select.cover && record.cover && view.cover)
    view.cover = { ...view.cover, data: dataOf(record.cover) };
  for (const slot of ['draftingProcess', 'additionalDocument'] as const) {
    if (select[slot])
      view[slot] = view[slot].map((shown, index) => ({
        ...shown,
        data: dataOf(record[slot][index]!),
      }));
  }
  return view;
}

/**
 * The detail answer, with the interface's spellings (`oboutProject`, `createdDate`, `fileID`).
 * Every other key is the record's own; `seq` and `conflicts` belong to the change feed only,
 * the sync bookkeeping (`syncApplied`) to no answer.
 */
export function detailView(record: StoredPortfolioRecord): PortfolioDetail {
  const {
    aboutProject,
    createdTime,
    cover,
    draftingProcess,
    additionalDocument,
    seq: _seq,
    conflicts: _conflicts,
    syncApplied: _syncApplied,
    ...same
  } = record;
  return {
    ...same,
    cover: cover && coverFileView(cover),
    oboutProject: aboutProject,
    draftingProcess: draftingProcess.map(listFileView),
    additionalDocument: additionalDocument.map(listFileView),
    createdDate: createdTime,
  };
}
