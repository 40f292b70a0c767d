import {
  LIMITS,
  type CreatePortfolioBody,
  type PortfolioDetail,
  type UpdatePortfolioBody,
} from '../../../shared';
import { tooLongMessage } from '../components/character-count';

/** The edit form's state: every interface field, arrays as tag lists. */
export interface PortfolioFormValues {
  memberBarcode: string;
  category: string;
  projectTitle: string;
  projectDetail: string;
  aboutProject: string;
  projectLanuching: string;
  readyToBuy: string;
  relativeCategory: string[];
  occasion: string[];
  referenceStyling: string[];
  generalTag: string[];
  certificateByOrg: string[];
  certificateDesc: string;
  staffPick: boolean;
}

export type FormField = keyof PortfolioFormValues;
export type FieldErrors = Partial<Record<FormField, string>>;

export const FIELD_LABELS: Record<FormField, string> = {
  projectTitle: 'Project title',
  memberBarcode: 'Member barcode',
  category: 'Category',
  relativeCategory: 'Related categories',
  projectDetail: 'Project detail',
  aboutProject: 'About the project',
  projectLanuching: 'Project launching',
  readyToBuy: 'Ready to buy',
  occasion: 'Occasion',
  referenceStyling: 'Reference styling',
  generalTag: 'Tags',
  certificateByOrg: 'Certificates',
  certificateDesc: 'Certificate description',
  staffPick: 'Staff pick',
};

export const TEXT_FIELDS = [
  'memberBarcode',
  'category',
  'projectTitle',
  'projectDetail',
  'aboutProject',
  'projectLanuching',
  'readyToBuy',
  'certificateDesc',
] as const;
export const TAG_FIELDS = [
  'relativeCategory',
  'occasion',
  'referenceStyling',
  'generalTag',
  'certificateByOrg',
] as const;
export const REQUIRED_FIELDS = [
  'memberBarcode',
  'category',
  'projectTitle',
  'projectDetail',
] as const;
export const ADMIN_FORM_FIELDS = ['certificateByOrg', 'certificateDesc', 'staffPick'] as const;

const MAX_LENGTH: Record<(typeof TEXT_FIELDS)[number], number> = {
  memberBarcode: LIMITS.memberBarcode,
  category: LIMITS.category,
  projectTitle: LIMITS.projectTitle,
  projectDetail: LIMITS.projectDetail,
  aboutProject: LIMITS.aboutProject,
  projectLanuching: LIMITS.projectLanuching,
  readyToBuy: LIMITS.readyToBuy,
  certificateDesc: LIMITS.certificateDesc,
};

export function maxLengthOf(field: (typeof TEXT_FIELDS)[number]): number {
  return MAX_LENGTH[field];
}

const MEMBER_BARCODE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export function emptyValues(): PortfolioFormValues {
  return {
    memberBarcode: '',
    category: '',
    projectTitle: '',
    projectDetail: '',
    aboutProject: '',
    projectLanuching: '',
    readyToBuy: '',
    relativeCategory: [],
    occasion: [],
    referenceStyling: [],
    generalTag: [],
    certificateByOrg: [],
    certificateDesc: '',
    staffPick: false,
  };
}

export function valuesFromDetail(detail: PortfolioDetail): PortfolioFormValues {
  return {
    memberBarcode: detail.memberBarcode,
    category: detail.category,
    projectTitle: detail.projectTitle,
    projectDetail: detail.projectDetail,
    aboutProject: detail.oboutProject,
    projectLanuching: detail.projectLanuching,
    readyToBuy: detail.readyToBuy,
    relativeCategory: [...detail.relativeCategory],
    occasion: [...detail.occasion],
    referenceStyling: [...detail.referenceStyling],
    generalTag: [...detail.generalTag],
    certificateByOrg: [...detail.certificateByOrg],
    certificateDesc: detail.certificateDesc,
    staffPick: detail.staffPick,
  };
}

/** The same checks the server makes, so most mistakes show before a round trip. */
export function validate(values: PortfolioFormValues): FieldErrors {
  const errors: FieldErrors = {};
  for (const field of TEXT_FIELDS) {
    if (values[field].length > MAX_LENGTH[field])
      errors[field] = tooLongMessage(FIELD_LABELS[field], values[field].length, MAX_LENGTH[field]);
  }
  for (const field of REQUIRED_FIELDS) {
    if (!values[field].trim()) errors[field] = `${FIELD_LABELS[field]} is required.`;
  }
  if (!errors.memberBarcode && !MEMBER_BARCODE.test(values.memberBarcode)) {
    errors.memberBarcode =
      'Use letters, digits, ".", "-" and "_", starting with a letter or digit.';
  }
  for (const field of TAG_FIELDS) {
    if (values[field].length > LIMITS.tags) errors[field] = `At most ${LIMITS.tags} entries.`;
    else if (values[field].some((tag) => tag.length > LIMITS.tag))
      errors[field] = `Each entry has at most ${LIMITS.tag} characters.`;
  }
  return errors;
}

/** A create body: optional fields are left out when empty. */
export function toCreateBody(values: PortfolioFormValues): CreatePortfolioBody {
  const body: CreatePortfolioBody = {
    memberBarcode: values.memberBarcode.trim(),
    category: values.category.trim(),
    projectTitle: values.projectTitle.trim(),
    projectDetail: values.projectDetail,
  };
  if (values.aboutProject) body.aboutProject = values.aboutProject;
  if (values.projectLanuching) body.projectLanuching = values.projectLanuching;
  if (values.readyToBuy) body.readyToBuy = values.readyToBuy;
  for (const field of ['relativeCategory', 'occasion', 'referenceStyling', 'generalTag'] as const) {
    if (values[field].length > 0) body[field] = values[field];
  }
  return body;
}

/**
 * An update body. Every editor field is sent, so an emptied field is cleared (DESIGN §3);
 * admin fields only by admins, who alone may send them.
 */
export function toUpdateBody(
  values: PortfolioFormValues,
  options: { admin: boolean; revision?: number },
): UpdatePortfolioBody {
  const body: UpdatePortfolioBody = {
    memberBarcode: values.memberBarcode.trim(),
    category: values.category.trim(),
    projectTitle: values.projectTitle.trim(),
    projectDetail: values.projectDetail,
    aboutProject: values.aboutProject,
    projectLanuching: values.projectLanuching,
    readyToBuy: values.readyToBuy,
    relativeCategory: values.relativeCategory,
    occasion: values.occasion,
    referenceStyling: values.referenceStyling,
    generalTag: values.generalTag,
  };
  if (options.admin) {
    body.certificateByOrg = values.certificateByOrg;
    body.certificateDesc = values.certificateDesc;
    body.staffPick = values.staffPick;
  }
  if (options.revision !== undefined) body.revision = options.revision;
  return body;
}

function sameValue(a: PortfolioFormValues[FormField], b: PortfolioFormValues[FormField]): boolean {
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((item, index) => item === b[index]);
  return a === b;
}

/** The fields whose values differ, in form order; admin fields only when the user may edit them. */
export function changedFields(
  a: PortfolioFormValues,
  b: PortfolioFormValues,
  includeAdmin = true,
): FormField[] {
  return (Object.keys(FIELD_LABELS) as FormField[]).filter(
    (field) =>
      (includeAdmin || !(ADMIN_FORM_FIELDS as readonly string[]).includes(field)) &&
      !sameValue(a[field], b[field]),
  );
}

/** How a value reads in a "what changed" list. */
export function displayValue(value: PortfolioFormValues[FormField]): string {
  if (Array.isArray(value)) return value.length ? value.join(', ') : '(none)';
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  if (!value) return '(empty)';
  return value.length > 160 ? `${value.slice(0, 160)}…` : value;
}

/** The server names aboutProject by either spelling; forms know one. */
export function formFieldOf(serverField: string): FormField | null {
  const field = serverField === 'oboutProject' ? 'aboutProject' : serverField;
  return field in FIELD_LABELS ? (field as FormField) : null;
}
