import { randomUUID } from 'node:crypto';
import {
  ADMIN_FIELDS,
  type CreatePortfolioBody,
  type PortfolioRecord,
  type UpdatePortfolioBody,
} from '../../shared';
import { ApiError } from '../errors';
import type { UserRecord } from '../repositories/user-repository';
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

function applyEditorFields(current: PortfolioRecord, body: EditorBody): PortfolioRecord {
  return {
    ...current,
    memberBarcode: body.memberBarcode,
    category: body.category,
    projectTitle: body.projectTitle,
    projectDetail: body.projectDetail,
    aboutProject: text(aboutProject(body), current.aboutProject),
    projectLanuching: text(body.projectLanuching, current.projectLanuching),
    readyToBuy: text(body.readyToBuy, current.readyToBuy),
    occasion: list(body.occasion, current.occasion),
    referenceStyling: styling(body.referenceStyling, current.referenceStyling),
    generalTag: list(body.generalTag, current.generalTag),
    relativeCategory: list(body.relativeCategory, current.relativeCategory),
  };
}

export function newPortfolio(body: CreatePortfolioBody, now: number): PortfolioRecord {
  const empty: PortfolioRecord = {
    portfolioId: body.portfolioId ?? randomUUID(),
    memberBarcode: '',
    category: '',
    relativeCategory: [],
    projectTitle: '',
    aboutProject: '',
    projectDetail: '',
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
    published: false,
    active: true,
    revision: 1,
  };
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
  const next = applyEditorFields(current, body);
  return {
    ...next,
    certificateByOrg: list(body.certificateByOrg, current.certificateByOrg),
    certificateDesc:
      body.certificateDesc === undefined
        ? current.certificateDesc
        : sanitizeHtml(body.certificateDesc ?? ''),
    staffPick: body.staffPick ?? current.staffPick,
    ...COMMAND_EFFECTS[body.command ?? 'save'],
    modifiedTime: Math.max(now, current.modifiedTime),
    revision: current.revision + 1,
  };
}

/** May `user` edit portfolios of `category`? Admins may edit all; others need allowEdit. */
export function mayEditCategory(user: UserRecord, category: string): boolean {
  return (
    user.role === 'admin' ||
    (user.role === 'editor' && (user.allowEdit.includes('*') || user.allowEdit.includes(category)))
  );
}

/** Throws the 403 that an update by `user` deserves, if any (DESIGN §2, §3). */
export function assertMayUpdate(
  user: UserRecord,
  current: PortfolioRecord,
  body: Partial<UpdatePortfolioBody>,
): void {
  if (user.role === 'viewer') throw new ApiError('FORBIDDEN', 'Viewers cannot change portfolios.');
  for (const category of new Set([current.category, body.category ?? current.category])) {
    if (!mayEditCategory(user, category)) {
      throw new ApiError(
        'CATEGORY_NOT_ALLOWED',
        `You may not edit portfolios in the category "${category}".`,
        [{ field: 'body.category', message: `"${category}" is not in your allowEdit list` }],
      );
    }
  }
  if (user.role === 'admin') return;
  const adminFields = ADMIN_FIELDS.filter((field) => body[field] !== undefined);
  if (body.command !== undefined && body.command !== 'save') adminFields.push('command' as never);
  if (adminFields.length > 0) {
    throw new ApiError(
      'FORBIDDEN_FIELD',
      `Only an admin may set ${adminFields.join(', ')}.`,
      adminFields.map((field) => ({ field: `body.${field}`, message: 'needs the admin role' })),
    );
  }
}

/** Viewers see only published, active portfolios; to them the rest do not exist. */
export function isVisibleTo(user: UserRecord, portfolio: PortfolioRecord): boolean {
  return user.role !== 'viewer' || (portfolio.published && portfolio.active);
}

/** Conditional update: the revision in the body or in If-Match must be the current one. */
export function expectedRevision(
  body: Pick<UpdatePortfolioBody, 'revision'>,
  ifMatch: string | undefined,
): number | undefined {
  if (body.revision !== undefined) return body.revision;
  // `*` asks only that the portfolio exist (RFC 9110, 13.1.1), which the caller checks anyway.
  if (ifMatch === undefined || ifMatch.trim() === '*') return undefined;
  const match = /^(?:W\/)?"?(\d+)"?$/.exec(ifMatch.trim());
  if (!match) {
    throw new ApiError('VALIDATION_FAILED', 'If-Match must be a revision number, like "3", or *.', [
      { field: 'headers.if-match', message: 'must be a revision number or *' },
    ]);
  }
  return Number(match[1]);
}
