import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StoredFile } from '../../shared';
import {
  changedFields,
  mergeRecords,
  TAG_LIST_FIELDS,
  type MergeFields,
} from '../../server/domain/three-way-merge';

const file = (fileId: string, description = ''): StoredFile => ({
  fileId,
  originalFilename: `${fileId}.png`,
  fullFileExtension: 'png',
  mimeType: 'image/png',
  description,
  createdTime: 1,
  modifiedTime: 1,
  md5Checksum: 'm',
  sha256: `sha-${fileId}`,
  size: 10,
  dimention: null,
});

const tag = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f');
const tags = fc.uniqueArray(tag, { maxLength: 6 });
const files = fc
  .uniqueArray(fc.constantFrom('f1', 'f2', 'f3', 'f4'), { maxLength: 4 })
  .map((ids) => ids.map((id) => file(id)));
const scalar = fc.constantFrom('x', 'y', 'z');

/** A record of a few merged fields: two scalars, two tag lists, a file list, the cover. */
const record = fc.record({
  projectTitle: scalar,
  readyToBuy: scalar,
  staffPick: fc.boolean(),
  generalTag: tags,
  occasion: tags,
  draftingProcess: files,
  cover: fc.option(
    fc.constantFrom('c1', 'c2').map((id) => file(id)),
    { nil: null },
  ),
});

describe('three-way merge (pure)', () => {
  it('merging with no local change gives theirs', () => {
    fc.assert(
      fc.property(record, record, (base, theirs) => {
        const { merged, conflicts } = mergeRecords(base, base, theirs);
        expect(conflicts).toEqual({});
        expect(merged).toEqual(theirs);
      }),
    );
  });

  it('merging with no remote change gives mine', () => {
    fc.assert(
      fc.property(record, record, (base, current) => {
        const { merged, conflicts, changedFields: changed } = mergeRecords(base, current, base);
        expect(conflicts).toEqual({});
        expect(merged).toEqual(current);
        expect(changed).toEqual([]);
      }),
    );
  });

  it('edits of different fields commute and both land', () => {
    fc.assert(
      fc.property(record, record, record, fc.integer({ min: 0, max: 127 }), (base, a, b, mask) => {
        const keys = Object.keys(base) as Array<keyof typeof base>;
        const mine: MergeFields = { ...base };
        const theirs: MergeFields = { ...base };
        keys.forEach((key, index) => {
          // Each field is edited by one side at most.
          if (mask & (1 << index)) (mine as Record<string, unknown>)[key] = a[key];
          else (theirs as Record<string, unknown>)[key] = b[key];
        });
        const one = mergeRecords(base, mine, theirs);
        const other = mergeRecords(base, theirs, mine);
        expect(one.conflicts).toEqual({});
        expect(other.conflicts).toEqual({});
        expect(one.merged).toEqual(other.merged);
        for (const key of keys) {
          const expected = (mask & (1 << keys.indexOf(key)) ? mine : theirs)[key];
          expect(one.merged[key]).toEqual(expected);
        }
      }),
    );
  });

  it('set merges never lose a tag or file added on either side', () => {
    fc.assert(
      fc.property(record, record, record, (base, current, theirs) => {
        const { merged } = mergeRecords(base, current, theirs);
        for (const field of ['generalTag', 'occasion'] as const) {
          const added = [
            ...current[field].filter((t) => !base[field].includes(t)),
            ...theirs[field].filter((t) => !base[field].includes(t)),
          ];
          for (const t of added) expect(merged[field]).toContain(t);
          // Current's order is kept and nothing is listed twice.
          expect(new Set(merged[field]).size).toBe(merged[field].length);
        }
        const ids = (list: StoredFile[]) => list.map((f) => f.fileId);
        const addedFiles = [
          ...ids(current.draftingProcess).filter((id) => !ids(base.draftingProcess).includes(id)),
          ...ids(theirs.draftingProcess).filter((id) => !ids(base.draftingProcess).includes(id)),
        ];
        for (const id of addedFiles) expect(ids(merged.draftingProcess)).toContain(id);
      }),
    );
  });

  it('the same field changed to different values on both sides is a conflict that keeps current', () => {
    fc.assert(
      fc.property(record, scalar, scalar, (base, mine, theirs) => {
        fc.pre(mine !== base.projectTitle && theirs !== base.projectTitle && mine !== theirs);
        const current = { ...base, projectTitle: mine };
        const result = mergeRecords(base, current, { projectTitle: theirs });
        expect(result.merged.projectTitle).toBe(mine);
        expect(result.conflicts).toEqual({
          projectTitle: { base: base.projectTitle, current: mine, theirs },
        });
        expect(result.changedFields).toEqual([]);
      }),
    );
  });

  it('tag lists keep current order then add theirs; removals by theirs apply', () => {
    const result = mergeRecords(
      { generalTag: ['a', 'b', 'c'] },
      { generalTag: ['c', 'a', 'b', 'x'] },
      { generalTag: ['a', 'c', 'y'] },
    );
    expect(result.merged.generalTag).toEqual(['c', 'a', 'x', 'y']);
    expect(result.conflicts).toEqual({});
    expect(result.changedFields).toEqual(['generalTag']);
    expect(TAG_LIST_FIELDS).toContain('certificateByOrg');
  });

  it('files are compared by what a client sets; files by id with the words of the side that changed them', () => {
    // The same file whose server-computed metadata differs (times): no change, no conflict.
    const recomputed = mergeRecords(
      { cover: file('c1') },
      { cover: file('c1') },
      { cover: { ...file('c1'), createdTime: 2, modifiedTime: 2 } },
    );
    expect(recomputed.conflicts).toEqual({});
    expect(recomputed.changedFields).toEqual([]);
    // Its description changed on both sides: a conflict, never one silently dropped (issue 26).
    const describedTwice = mergeRecords(
      { cover: file('c1') },
      { cover: file('c1', 'mine') },
      { cover: file('c1', 'theirs') },
    );
    expect(describedTwice.conflicts.cover).toEqual({
      base: file('c1'),
      current: file('c1', 'mine'),
      theirs: file('c1', 'theirs'),
    });
    expect(describedTwice.merged.cover?.description).toBe('mine');
    const listDescribedTwice = mergeRecords(
      { draftingProcess: [file('f1')] },
      { draftingProcess: [file('f1', 'mine')] },
      { draftingProcess: [file('f1', 'theirs')] },
    );
    expect(Object.keys(listDescribedTwice.conflicts)).toEqual(['draftingProcess']);
    const otherCover = mergeRecords({ cover: file('c1') }, { cover: file('c2') }, { cover: null });
    expect(Object.keys(otherCover.conflicts)).toEqual(['cover']);
    const described = mergeRecords(
      { draftingProcess: [file('f1'), file('f2')] },
      { draftingProcess: [file('f1'), file('f2'), file('f3')] },
      { draftingProcess: [file('f1', 'new words')] },
    );
    expect(described.merged.draftingProcess).toEqual([file('f1', 'new words'), file('f3')]);
  });

  it('without a base, every field theirs sends that differs from current is a conflict', () => {
    const result = mergeRecords(
      null,
      { projectTitle: 'x', generalTag: ['a'], readyToBuy: 'same' },
      { projectTitle: 'y', generalTag: ['a', 'b'], readyToBuy: 'same' },
    );
    expect(result.merged).toEqual({ projectTitle: 'x', generalTag: ['a'], readyToBuy: 'same' });
    expect(Object.keys(result.conflicts).sort()).toEqual(['generalTag', 'projectTitle']);
    expect(result.conflicts.projectTitle).toEqual({ base: null, current: 'x', theirs: 'y' });
  });

  it('changedFields lists merged fields whose values differ', () => {
    expect(
      changedFields(
        { projectTitle: 'a', generalTag: ['x'], published: false },
        { projectTitle: 'b', generalTag: ['x'], published: true },
      ),
    ).toEqual(['projectTitle', 'published']);
    expect(changedFields(null, { projectTitle: 'a' })).toEqual(['projectTitle']);
  });
});
