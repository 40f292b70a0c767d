import { describe, expect, it } from 'vitest';
import { planIngest } from '../../renderer/src/gallery/folder-ingest';

const file = (size = 3) => new File(['x'.repeat(size)], 'ignored');

describe('planIngest: what a drop of folders or files makes', () => {
  it('one portfolio per folder: the first image by name the cover, images drafting, documents additional', () => {
    const { groups, skipped } = planIngest([
      { file: file(), path: 'Lake/10.jpg' },
      { file: file(), path: 'Lake/2.png' },
      { file: file(), path: 'Lake/plan.pdf' },
      { file: file(0), path: 'Lake/blank.jpg' },
      { file: file(), path: 'Lake/app.exe' },
      { file: file(), path: 'Garden/a.webp' },
    ]);
    expect(groups.map((group) => group.folder)).toEqual(['Garden', 'Lake']);
    expect(groups[1]!.files.map((item) => [item.name, item.slot])).toEqual([
      ['2.png', 'cover'],
      ['10.jpg', 'draftingProcess'],
      ['plan.pdf', 'additionalDocument'],
    ]);
    expect(skipped).toEqual([
      { path: 'Lake/blank.jpg', reason: 'empty file' },
      { path: 'Lake/app.exe', reason: 'not a kind of file a portfolio takes' },
    ]);
  });

  it('a single folder of folders: its sub-folders are the portfolios; loose files go together', () => {
    const picked = planIngest([
      { file: file(), path: 'projects/Lake/a.jpg' },
      { file: file(), path: 'projects/Garden/b.jpg' },
      { file: file(), path: 'projects/notes.txt' },
    ]);
    expect(picked.groups.map((group) => group.folder)).toEqual([null, 'Garden', 'Lake']);
    expect(picked.groups[0]!.files[0]).toMatchObject({
      name: 'notes.txt',
      slot: 'additionalDocument',
    });
  });
});
