import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import {
  ADMIN_FIELDS,
  adminOnlyParts,
  fieldKeysWhere,
  fieldKeysWith,
  initialValueOf,
  PORTFOLIO_FIELDS,
  type FieldKey,
  isStaff,
  mayEditCategory,
  type Actor,
  type AdminField,
  type CreatePortfolioBody,
  type PortfolioRecord,
  type UpdatePortfolioBody,
} from '../../shared';
import { ApiError } from '../errors';
import { sanitizeHtml } from './sanitize-html';

type EditorBody = Omit<CreatePortfolioBody, 'portfolioId'>;
type OptionalText = string | null | undefined;
type OptionalList = string[] | null | undefined;

/** undefined keeps the current value; null and "" clear it (DESIGN §3). */
const text = (value: OptionalText, current: string) =>
  value === undefined ? current : (value ?? '');
const list = (value: OptionalList, current: string[]) =>
  value === undefined ? current : (value ?? []);

/** referenceStyling arrives as a string or an array and is always kept as an array. */
function styling(value: string | string[] | null | undefined, current: string[]): string[] {
  if (value === undefined) return current;
  if (value === null || value === '') return [];
  return typeof value === 'string' ? [value] : value;
}

/** aboutProject may also arrive under the detail's spelling, oboutProject. */
function aboutProject(body: EditorBody): OptionalText {
  if (
    body.aboutProject !== undefined &&
    body.oboutProject !== undefined &&
    body.aboutProject !== body.oboutProject
  ) {
    throw new ApiError(
      'VALIDATION_FAILED',
      'Send aboutProject or oboutProject, not two different values.',
      [{ field: 'body.oboutProject', message: 'conflicts with aboutProject' }],
    );
  }
  return body.aboutProject !== undefined ? body.aboutProject : body.oboutProject;
}

/** The editor rows of the field table, but for the two that have a rule of their own below. */
const PLAIN_EDITOR_KEYS = fieldKeysWith('writer', 'editor').filter(
  (key) => key !== 'aboutProject' && key !== 'referenceStyling',
);

/** A body's value for a field of the table, applied to `current`'s (undefined keeps it). */
function nextValue(key: FieldKey, value: unknown, current: unknown): unknown {
  switch (PORTFOLIO_FIELDS[key].kind) {
    case 'tags':
      return list(value as OptionalList, current as string[]);
    case 'html':
      return value === undefined ? current : sanitizeHtml((value as string | null) ?? '');
    case 'flag':
      return value ?? current;
    default:
      return text(value as OptionalText, current as string);
  }
}

/** `current` with the fields `keys` of `body` applied. */
function applyFields(
  current: PortfolioRecord,
  body: Partial<Record<FieldKey, unknown>>,
  keys: readonly FieldKey[],
): PortfolioRecord {
  const next: Record<string, unknown> = { ...current };
  for (const key of keys) next[key] = nextValue(key, body[key], current[key]);
  return next as PortfolioRecord;
}

function applyEditorFields(current: PortfolioRecord, body: EditorBody): PortfolioRecord {
  return {
    ...applyFields(current, body, PLAIN_EDITOR_KEYS),
    aboutProject: text(aboutProject(body), current.aboutProject),
    referenceStyling: styling(body.referenceStyling, current.referenceStyling),
  };
}

/** What a new portfolio holds before its body is applied: each field's initial value. */
const INITIAL_FIELDS = fieldKeysWhere((row) => row.part === 'content' || row.part === 'state');

export function newPortfolio(body: CreatePortfolioBody, now: number): PortfolioRecord {
  const empty = {
    portfolioId: body.portfolioId ?? randomUUID(),
    ...Object.fromEntries(INITIAL_FIELDS.map((key) => [key, initialValueOf(key)])),
    createdTime: now,
    modifiedTime: now,
    revision: initialValueOf('revision'),
  } as PortfolioRecord;
  return applyEditorFields(empty, body);
}

const COMMAND_EFFECTS = {
  save: {},
  publish: { published: true },
  unpublish: { published: false },
  activate: { active: true },
  deactivate: { active: false },
} as const;

/** The next version of a portfolio after an update; the caller checked permissions. */
export function updatedPortfolio(
  current: PortfolioRecord,
  body: UpdatePortfolioBody,
  now: number,
): PortfolioRecord {
  const next = applyFields(applyEditorFields(current, body), body, ADMIN_FIELDS);
  return {
    ...next,
    ...COMMAND_EFFECTS[body.command ?? 'save'],
    modifiedTime: Math.max(now, current.modifiedTime),
    revision: current.revision + 1,
  };
}

/**
 * Throws the 403 that a change of `current` by `user` deserves, if any (DESIGN §2, §3): a viewer,
 * an editor outside the category (the current one, and the one the body moves it to), or a
 * non-admin sending admin-only fields or commands. `body` may be unvalidated: only its keys count.
 */
export function assertMayChange(
  user: Actor,
  current: Pick<PortfolioRecord, 'category'>,
  body: Partial<Record<AdminField | 'category' | 'command', unknown>> = {},
): void {
  if (!isStaff(user)) throw new ApiError('FORBIDDEN', 'Viewers cannot change portfolios.');
  const target = typeof body.category === 'string' ? body.category : current.category;
  for (const category of new Set([current.category, target])) {
    if (!mayEditCategory(user, category)) {
      throw new ApiError(
        'CATEGORY_NOT_ALLOWED',
        `You may not edit portfolios in the category "${category}".`,
        [{ field: 'body.category', message: `"${category}" is not in your allowEdit list` }],
      );
    }
  }
  const adminParts = adminOnlyParts(user, body as Parameters<typeof adminOnlyParts>[1]);
  if (adminParts.length > 0) {
    throw new ApiError(
      'FORBIDDEN_FIELD',
      `Only an admin may set ${adminParts.join(', ')}.`,
      adminParts.map((field) => ({ field: `body.${field}`, message: 'needs the admin role' })),
    );
  }
}

/**
 * Throws the 403 that creating a portfolio of `category` by `user` deserves, if any (DESIGN §2):
 * a viewer, or an editor outside the category — nobody makes what they could not then edit. The
 * one rule for every path a portfolio is created by (REST, sync).
 */
export function assertMayCreate(user: Actor, category: string): void {
  if (!isStaff(user)) throw new ApiError('FORBIDDEN', 'Viewers cannot create portfolios.');
  if (!mayEditCategory(user, category)) {
    throw new ApiError(
      'CATEGORY_NOT_ALLOWED',
      `You may not create portfolios in the category "${category}": it is not one you may edit.`,
      [{ field: 'body.category', message: `"${category}" is not in your allowEdit list` }],
    );
  }
}

/** A conditional change: the revision the caller expects, and where it said so. */
export interface Expected {
  revision: number;
  source: 'body.revision' | 'headers.if-match';
}

/**
 * The revision a request's If-Match names, as the route read it: absent (or `*`, which asks only
 * that the portfolio exist, RFC 9110 13.1.1, as every change checks anyway), a revision, or
 * `malformed` — refused only once the caller is known to be allowed the change (DESIGN §13).
 */
export type IfMatchRevision = number | 'malformed' | undefined;

/**
 * A change is conditional when the body carries `revision` or If-Match names one (DESIGN §3);
 * the body wins when both do.
 */
export function expectedRevision(
  body: { revision?: number | undefined },
  ifMatch: IfMatchRevision,
): Expected | undefined {
  if (body.revision !== undefined) return { revision: body.revision, source: 'body.revision' };
  if (ifMatch === undefined) return undefined;
  if (ifMatch === 'malformed') {
    throw new ApiError('VALIDATION_FAILED', 'If-Match must be a revision number, like "3", or *.', [
      { field: 'headers.if-match', message: 'must be a revision number or *' },
    ]);
  }
  return { revision: ifMatch, source: 'headers.if-match' };
}

/** Bookkeeping that every change moves (the table's untracked rows); never a changed field. */
const UNTRACKED_FIELDS = new Set<string>(fieldKeysWith('untracked', true));

/** The record's top-level keys whose values differ (all of them for a new portfolio). */
export function changedFields(previous: PortfolioRecord | null, next: PortfolioRecord): string[] {
  const keys = Object.keys(next) as Array<keyof PortfolioRecord>;
  // Optional keys a change removed (the last conflict resolved) changed too.
  if (previous?.conflicts !== undefined && next.conflicts === undefined) keys.push('conflicts');
  return keys.filter(
    (key) => !UNTRACKED_FIELDS.has(key) && !isDeepStrictEqual(previous?.[key], next[key]),
  );
}

/**
 * A portfolio's content: what a restore brings back (identity, state and bookkeeping stay
 * current), and with the state flags what sync merges (three-way-merge.ts).
 */
export const CONTENT_FIELDS = fieldKeysWith('part', 'content');

/**
 * The next revision of `current` with the content of an older revision (DESIGN §9: a restore
 * never rewinds). `published` and `active` are state set by commands, not content: they stay.
 */
export function restoredPortfolio(
  current: PortfolioRecord,
  old: PortfolioRecord,
  now: number,
): PortfolioRecord {
  const content = Object.fromEntries(CONTENT_FIELDS.map((key) => [key, old[key]]));
  return {
    ...current,
    ...content,
    modifiedTime: Math.max(now, current.modifiedTime),
    revision: current.revision + 1,
  };
}

/** A trashed portfolio coming back: as it was deleted, at the next revision. */
export function undeletedPortfolio(deleted: PortfolioRecord, now: number): PortfolioRecord {
  return {
    ...deleted,
    modifiedTime: Math.max(now, deleted.modifiedTime),
    revision: deleted.revision + 1,
  };
}
