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
  record: PortfolioRecord,
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
