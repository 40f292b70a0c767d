import { describe, expect, it } from 'vitest';
import type { PortfolioDetail } from '../../shared';
import {
  COMPARED_FIELDS,
  changedFieldLabels,
  commandLabel,
  compareRevisions,
  fieldLabel,
  fileIdsOf,
} from '../../renderer/src/history/revision-diff';

const file = (fileID: string, md5: string, description = '') => ({
  fileID,
  originalFilename: `${fileID}.png`,
  mimeType: 'image/png',
  md5Checksum: md5,
  description,
});

const base: PortfolioDetail = {
  portfolioId: 'p1',
  memberBarcode: 'M-1',
  category: 'Ceramics',
  projectTitle: 'Riverside',
  cover: { fileId: 'c1', originalFilename: 'cover.png', md5Checksum: 'aa', description: '' },
  oboutProject: 'About',
  projectDetail: 'Detail',
  draftingProcess: [file('d1', '11'), file('d2', '22')],
  projectLanuching: '',
  readyToBuy: 'Yes',
  occasion: ['Wedding'],
  referenceStyling: [],
  generalTag: ['stoneware', 'kiln'],
  additionalDocument: [],
  relativeCategory: [],
  certificateByOrg: [],
  certificateDesc: '',
  staffPick: false,
  createdDate: 1,
  modifiedTime: 2,
  createdBy: 'editor',
  modifiedBy: 'admin',
  published: false,
  active: true,
  revision: 3,
};

const differing = (older: PortfolioDetail, current: PortfolioDetail) =>
  compareRevisions(older, current)
    .filter((field) => field.differs)
    .map((field) => field.key);

describe('comparing a revision with the current one', () => {
  it('finds nothing when only bookkeeping (revision, times) moved', () => {
    expect(differing(base, { ...base, revision: 9, modifiedTime: 99, createdDate: 5 })).toEqual([]);
  });

  it('marks exactly the fields a person changed, in display order', () => {
    const current: PortfolioDetail = {
      ...base,
      projectTitle: 'Riverside & Shop',
      generalTag: ['kiln', 'stoneware'], // order is part of a tag list
      published: true,
      oboutProject: 'About us',
    };
    expect(differing(base, current)).toEqual([
      'projectTitle',
      'published',
      'oboutProject',
      'generalTag',
    ]);
  });

  it('treats a replaced, re-described, added or removed file as a difference', () => {
    const replacedCover = { ...base, cover: { ...base.cover, md5Checksum: 'bb' } };
    expect(differing(base, replacedCover)).toEqual(['cover']);
    expect(differing(base, { ...base, cover: null })).toEqual(['cover']);
    const described = { ...base, draftingProcess: [file('d1', '11', 'First'), file('d2', '22')] };
    expect(differing(base, described)).toEqual(['draftingProcess']);
    const fewer = { ...base, draftingProcess: [file('d1', '11')] };
    expect(differing(base, fewer)).toEqual(['draftingProcess']);
    const added = { ...base, additionalDocument: [file('x', '33')] };
    expect(differing(base, added)).toEqual(['additionalDocument']);
  });

  it('compares every field the edit form and the admin actions can change', () => {
    const keys = COMPARED_FIELDS.map((field) => field.key);
    for (const key of [
      'projectTitle',
      'memberBarcode',
      'category',
      'projectDetail',
      'oboutProject',
      'certificateDesc',
      'staffPick',
      'published',
      'active',
      'cover',
      'draftingProcess',
      'additionalDocument',
    ] as const) {
      expect(keys).toContain(key);
    }
  });
});

describe('files the current version has', () => {
  it('collects the cover, drafting and document ids, whichever spelling of the id key', () => {
    const detail = { ...base, additionalDocument: [file('doc', '44')] };
    expect([...fileIdsOf(detail)].sort()).toEqual(['c1', 'd1', 'd2', 'doc']);
    expect([...fileIdsOf({ ...base, cover: null, draftingProcess: [] })]).toEqual([]);
  });
});

describe('labels for the history list', () => {
  it('names changed fields as the form does, either spelling of aboutProject, files by slot', () => {
    expect(fieldLabel('aboutProject')).toBe('About the project');
    expect(fieldLabel('oboutProject')).toBe('About the project');
    expect(fieldLabel('generalTag')).toBe('Tags');
    expect(fieldLabel('draftingProcess')).toBe('Drafting process');
    expect(fieldLabel('somethingNew')).toBe('somethingNew');
  });

  it('leaves out bookkeeping keys and says each field once', () => {
    expect(
      changedFieldLabels([
        'projectTitle',
        'revision',
        'modifiedTime',
        'aboutProject',
        'oboutProject',
      ]),
    ).toEqual(['Project title', 'About the project']);
  });

  it('says what kind of change made a revision, and passes an unknown one through', () => {
    expect(commandLabel('save')).toBe('Edited');
    expect(commandLabel('restore')).toBe('Restored an earlier revision');
    expect(commandLabel('undelete')).toBe('Restored from the Trash');
    expect(commandLabel('reindex')).toBe('reindex');
  });
});
