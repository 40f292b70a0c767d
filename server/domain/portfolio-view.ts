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

/** Reads a blob's bytes by sha256 (the blob store's `read`). */
export interface BlobReader {
  read(sha256: string): Promise<Buffer>;
}

/** The File object's `data`: the file's bytes in base64. */
export async function readFileData(file: StoredFile, blobs: BlobReader): Promise<string> {
  return (await blobs.read(file.sha256)).toString('base64');
}

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

/**
 * The detail answer with `data` filled in for the selected slots (all by default). Files are
 * read one after another, so a portfolio of many large files does not hold them all twice.
 */
export async function detailViewWithData(
  record: StoredPortfolioRecord,
  blobs: BlobReader,
  select: FileDataSelection = ALL_FILE_DATA,
): Promise<PortfolioDetail> {
  const view = detailView(record);
  const withData = async <T extends object>(file: StoredFile, shown: T) => ({
    ...shown,
    data: await readFileData(file, blobs),
  });
  if (select.cover && record.cover && view.cover)
    view.cover = await withData(record.cover, view.cover);
  for (const slot of ['draftingProcess', 'additionalDocument'] as const) {
    if (!select[slot]) continue;
    const items = [];
    for (const [index, file] of record[slot].entries())
      items.push(await withData(file, view[slot][index]!));
    view[slot] = items;
  }
  return view;
}

/**
 * The detail answer, with the interface's spellings (`oboutProject`, `createdDate`, `fileID`).
 * Every other key is the record's own; `seq` belongs to the change feed only.
 */
export function detailView(record: StoredPortfolioRecord): PortfolioDetail {
  const {
    aboutProject,
    createdTime,
    cover,
    draftingProcess,
    additionalDocument,
    seq: _seq,
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
