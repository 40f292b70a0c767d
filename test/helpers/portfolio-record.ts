import type { PortfolioRecord } from '../../shared';

/** A complete stored portfolio record, as the domain builds one; override what a test is about. */
export function portfolioRecord(
  portfolioId: string,
  overrides: Partial<PortfolioRecord> = {},
): PortfolioRecord {
  const now = overrides.createdTime ?? Date.now();
  return {
    portfolioId,
    memberBarcode: 'M1',
    category: 'Art',
    relativeCategory: [],
    projectTitle: `Title ${portfolioId}`,
    aboutProject: '',
    projectDetail: 'detail',
    projectLanuching: '',
    readyToBuy: '',
    occasion: [],
    referenceStyling: [],
    generalTag: [],
    certificateByOrg: [],
    certificateDesc: '',
    staffPick: false,
    cover: null,
    draftingProcess: [],
    additionalDocument: [],
    createdTime: now,
    modifiedTime: now,
    published: true,
    active: true,
    revision: 1,
    ...overrides,
  };
}
