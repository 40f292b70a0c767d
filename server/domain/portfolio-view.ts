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
