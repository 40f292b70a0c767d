import { describe, expect, it } from 'vitest';
import { editableCategories, mayEditCategory, type Actor } from '../../shared/permissions';

const editor = (allowEdit: string[]): Actor => ({ role: 'editor', allowEdit });

describe('editableCategories: what the create form offers, and what the server allows', () => {
  it('is every category for admins and for editors with "*"', () => {
    expect(editableCategories({ role: 'admin', allowEdit: [] })).toBeNull();
    expect(editableCategories(editor(['*']))).toBeNull();
  });

  it('is the allowEdit list of a limited editor, and nothing for a viewer', () => {
    expect(editableCategories(editor(['Ceramics', 'Glass']))).toEqual(['Ceramics', 'Glass']);
    expect(editableCategories(editor([]))).toEqual([]);
    expect(editableCategories({ role: 'viewer', allowEdit: ['*'] })).toEqual([]);
    expect(editableCategories(null)).toEqual([]);
  });

  it('agrees with mayEditCategory for every user and category', () => {
    const users: Actor[] = [
      { role: 'admin', allowEdit: [] },
      editor(['*']),
      editor(['Ceramics']),
      editor([]),
      { role: 'viewer', allowEdit: ['Ceramics'] },
    ];
    for (const user of users) {
      const offered = editableCategories(user);
      for (const category of ['Ceramics', 'Print', '*'])
        expect(mayEditCategory(user, category)).toBe(
          offered === null || offered.includes(category),
        );
    }
  });
});
