import type { CurrentSession } from '../../../shared';

export type SessionUser = CurrentSession['user'];

export const isAdmin = (user: SessionUser | null) => user?.role === 'admin';

/** Editors and admins: may create portfolios and see unpublished or inactive ones. */
export const isStaff = (user: SessionUser | null) =>
  user?.role === 'admin' || user?.role === 'editor';

/** Mirrors the server's rule (DESIGN §2): admins edit everything, editors their allowEdit categories. */
export function canEditCategory(user: SessionUser | null, category: string): boolean {
  if (!user) return false;
  if (user.role === 'admin') return true;
  if (user.role !== 'editor') return false;
  return user.allowEdit.includes('*') || user.allowEdit.includes(category);
}
