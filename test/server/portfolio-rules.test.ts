import { ifMatchRevision } from '../../server/routes/route-support';
import { describe, expect, it } from 'vitest';
import type { ApiError } from '../../server/errors';
import {
  assertMayChange,
  changedFields,
  expectedRevision,
  newPortfolio,
  restoredPortfolio,
  undeletedPortfolio,
  updatedPortfolio,
} from '../../server/domain/portfolio-rules';
import { portfolioBody } from '../helpers/test-server';

const base = newPortfolio(portfolioBody({ portfolioId: 'p1' }) as never, 1000);
const admin = { role: 'admin', allowEdit: [] } as const;
const editor = { role: 'editor', allowEdit: ['Interior'] } as const;
const viewer = { role: 'viewer', allowEdit: ['*'] } as const;

function codeOf(run: () => void): string | undefined {
  try {
    run();
  } catch (error) {
    return (error as ApiError).code;
  }
  return undefined;
}

describe('portfolio rules (pure domain)', () => {
  it('lists the fields a change altered, never revision or modifiedTime', () => {
    const next = updatedPortfolio(
      base,
      { ...portfolioBody(), projectTitle: 'New', command: 'publish' },
      2000,
    );
    expect(changedFields(base, next).sort()).toEqual(['projectTitle', 'published']);
    expect(changedFields(base, { ...base, revision: 9, modifiedTime: 9 })).toEqual([]);
    expect(changedFields(null, base)).toContain('memberBarcode');
    expect(changedFields(null, base)).not.toContain('revision');
  });

  it('restores content at the next revision; state and identity stay current', () => {
    const old = { ...base, projectTitle: 'Old', staffPick: true, published: false };
    const current = { ...base, projectTitle: 'Now', published: true, active: false, revision: 7 };
    const next = restoredPortfolio(current, old, 500);
    expect(next).toMatchObject({
      projectTitle: 'Old',
      staffPick: true,
      published: true,
      active: false,
      revision: 8,
      portfolioId: 'p1',
      createdTime: base.createdTime,
      modifiedTime: current.modifiedTime, // never goes back in time
    });
    expect(undeletedPortfolio({ ...base, revision: 4 }, 5000)).toMatchObject({
      revision: 5,
      modifiedTime: 5000,
    });
  });

  it('refuses viewers, editors outside a category (current or target), and admin-only parts', () => {
    expect(codeOf(() => assertMayChange(viewer, base))).toBe('FORBIDDEN');
    expect(codeOf(() => assertMayChange(editor, { category: 'Garden' }))).toBe(
      'CATEGORY_NOT_ALLOWED',
    );
    expect(codeOf(() => assertMayChange(editor, base, { category: 'Garden' }))).toBe(
      'CATEGORY_NOT_ALLOWED',
    );
    expect(codeOf(() => assertMayChange(editor, base, { staffPick: 'yes' }))).toBe(
      'FORBIDDEN_FIELD',
    );
    expect(codeOf(() => assertMayChange(editor, base, { command: 'publish' }))).toBe(
      'FORBIDDEN_FIELD',
    );
    expect(codeOf(() => assertMayChange(editor, base, { command: 'save' }))).toBeUndefined();
    expect(codeOf(() => assertMayChange(admin, { category: 'Garden' }, { staffPick: true }))).toBe(
      undefined,
    );
  });

  it('reads the expected revision from the body first, then If-Match (as the route parses it)', () => {
    const header = (value: string | undefined) => ifMatchRevision(value);
    expect(expectedRevision({ revision: 3 }, header('"5"'))).toEqual({
      revision: 3,
      source: 'body.revision',
    });
    expect(expectedRevision({}, header('W/"5"'))).toEqual({
      revision: 5,
      source: 'headers.if-match',
    });
    expect(expectedRevision({}, header(' * '))).toBeUndefined();
    expect(expectedRevision({}, header(undefined))).toBeUndefined();
    expect(codeOf(() => expectedRevision({}, header('five')))).toBe('VALIDATION_FAILED');
  });
});
