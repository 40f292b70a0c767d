import type {
  CoverFile,
  ListFile,
  PortfolioCreated,
  PortfolioDetail,
  PortfolioRecord,
  PortfolioUpdated,
  StoredFile,
} from '../../shared';

function echo(record: PortfolioRecord) {
  return {
    portfolioId: record.portfolioId,
    memberBarcode: record.memberBarcode,
    category: record.category,
    relativeCategory: record.relativeCategory,
    projectTitle: record.projectTitle,
    aboutProject: record.aboutProject,
    projectDetail: record.projectDetail,
    projectLanuching: record.projectLanuching,
    readyToBuy: record.readyToBuy,
    occasion: record.occasion,
    referenceStyling: record.referenceStyling,
    generalTag: record.generalTag,
    revision: record.revision,
  };
}

export const createdView = (record: PortfolioRecord): PortfolioCreated => ({
  ...echo(record),
  createdTime: record.createdTime,
});
export const updatedView = (record: PortfolioRecord): PortfolioUpdated => ({
  ...echo(record),
  modifiedTime: record.modifiedTime,
});

/** The File object of the interface, without `data` (the sha256 stays internal). */
export function coverFileView({ sha256: _sha, ...file }: StoredFile): CoverFile {
  return file;
}

export function listFileView({ sha256: _sha, fileId, ...file }: StoredFile): ListFile {
  return { fileID: fileId, ...file };
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
  record: PortfolioRecord,
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

/** The detail answer, with the interface's spellings (`oboutProject`, `createdDate`, `fileID`). */
export function detailView(record: PortfolioRecord): PortfolioDetail {
  return {
    portfolioId: record.portfolioId,
    memberBarcode: record.memberBarcode,
    category: record.category,
    projectTitle: record.projectTitle,
    cover: record.cover && coverFileView(record.cover),
    oboutProject: record.aboutProject,
    projectDetail: record.projectDetail,
    draftingProcess: record.draftingProcess.map(listFileView),
    projectLanuching: record.projectLanuching,
    readyToBuy: record.readyToBuy,
    occasion: record.occasion,
    referenceStyling: record.referenceStyling,
    generalTag: record.generalTag,
    additionalDocument: record.additionalDocument.map(listFileView),
    relativeCategory: record.relativeCategory,
    certificateByOrg: record.certificateByOrg,
    certificateDesc: record.certificateDesc,
    staffPick: record.staffPick,
    createdDate: record.createdTime,
    modifiedTime: record.modifiedTime,
    published: record.published,
    active: record.active,
    revision: record.revision,
  };
}
