/**
 * Who may do what (DESIGN §2, §3): one set of predicates for the server, which enforces them, and
 * the renderer, which only hides what would be refused. Pure functions of the user and the record.
 */
import { fieldKeysWith } from './portfolio-fields';
import type { Command } from './schemas/portfolio';
import type { Role } from './schemas/user';

/** The part of a user the rules look at. */
export interface Actor {
  role: Role;
  /** Categories the user may change; `"*"` means all. */
  allowEdit: readonly string[];
}

/** What a viewer's visibility rule looks at. */
export interface Visibility {
  published: boolean;
  active: boolean;
}

/** Fields only an admin may set (the field table's admin rows), on top of any command but `save`. */
export const ADMIN_FIELDS = fieldKeysWith('writer', 'admin');
export type AdminField = (typeof ADMIN_FIELDS)[number];

export const isAdmin = (user: Actor | null | undefined): boolean => user?.role === 'admin';

/** Editors and admins: may create, change, delete and restore portfolios, and see them all. */
export const isStaff = (user: Actor | null | undefined): boolean =>
  user?.role === 'admin' || user?.role === 'editor';

/**
 * The categories a user may change, and so create portfolios in or move them into (DESIGN §2):
 * `null` for every category (admins, and editors with `"*"`), the editor's allowEdit list
 * otherwise, none for a viewer. The create form offers exactly these.
 */
export function editableCategories(user: Actor | null | undefined): readonly string[] | null {
  if (!user || (user.role !== 'admin' && user.role !== 'editor')) return [];
  if (user.role === 'admin' || user.allowEdit.includes('*')) return null;
  return user.allowEdit;
}

/** Admins change every category; editors those in their allowEdit; viewers none. */
export function mayEditCategory(user: Actor | null | undefined, category: string): boolean {
  const categories = editableCategories(user);
  return categories === null || categories.includes(category);
}

/** Viewers see only published, active portfolios; to them the rest do not exist. */
export function isVisibleTo(user: Actor, portfolio: Visibility): boolean {
  return user.role !== 'viewer' || (portfolio.published && portfolio.active);
}

/** The admin-only parts of an update (fields and a command other than save) a non-admin sent. */
export function adminOnlyParts(
  user: Actor,
  body: Partial<Record<AdminField, unknown>> & { command?: Command },
): Array<AdminField | 'command'> {
  if (user.role === 'admin') return [];
  const parts: Array<AdminField | 'command'> = ADMIN_FIELDS.filter(
    (field) => body[field] !== undefined,
  );
  if (body.command !== undefined && body.command !== 'save') parts.push('command');
  return parts;
}
