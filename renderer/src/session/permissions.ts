import type { CurrentSession } from '../../../shared';

export type SessionUser = CurrentSession['user'];

/** The server's own rules (shared/permissions.ts): the UI hides exactly what it would refuse. */
export {
  editableCategories,
  isAdmin,
  isStaff,
  mayEditCategory as canEditCategory,
} from '../../../shared/permissions';
