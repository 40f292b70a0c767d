import {
  fieldLabelOf,
  PORTFOLIO_FIELDS,
  type FieldRow,
  type PortfolioDetail,
} from '../../../shared';
import { type FileObject, fileIdOf } from '../api/portfolio-api';

/** How a field reads in the side-by-side view, and how two of its values are compared. */
export type FieldKind = 'text' | 'html' | 'tags' | 'flag' | 'cover' | 'files';

export interface ComparedField {
  key: keyof PortfolioDetail;
  label: string;
  kind: FieldKind;
}

/** The label of a record key, e.g. from a revision's `changedFields` (either spelling). */
export function fieldLabel(key: string): string {
  return fieldLabelOf(key === 'oboutProject' ? 'aboutProject' : key);
}

/** The compare view's kind of a field of the table. */
function comparedKind(kind: FieldRow['kind']): FieldKind {
  switch (kind) {
    case 'html':
    case 'tags':
    case 'flag':
    case 'cover':
    case 'files':
      return kind;
    default:
      return 'text';
  }
}

/** Every field a person can change, in the order the detail page shows them (the table's). */
export const COMPARED_FIELDS: readonly ComparedField[] = (
  Object.entries(PORTFOLIO_FIELDS) as Array<[string, FieldRow]>
)
  .filter(([, row]) => row.shown !== undefined)
  .sort(([, a], [, b]) => a.shown! - b.shown!)
  .map(([key, row]) => ({
    // The detail spells aboutProject the interface's way.
    key: (key === 'aboutProject' ? 'oboutProject' : key) as keyof PortfolioDetail,
    label: row.label,
    kind: comparedKind(row.kind),
  }));

/** The changed fields a person cares about, labelled, without bookkeeping keys. */
export function changedFieldLabels(changedFields: readonly string[]): string[] {
  const hidden = new Set(['revision', 'modifiedTime', 'createdTime', 'seq', 'modifiedBy']);
  const labels = changedFields.filter((key) => !hidden.has(key)).map(fieldLabel);
  return [...new Set(labels)];
}

const COMMAND_LABELS: Record<string, string> = {
  create: 'Created',
  save: 'Edited',
  publish: 'Published',
  unpublish: 'Unpublished',
  activate: 'Activated',
  deactivate: 'Deactivated',
  file: 'Files changed',
  reorder: 'Drafting images reordered',
  cover: 'Cover chosen from the drafting images',
  describe: 'Several files described',
  delete: 'Moved to the Trash',
  restore: 'Restored an earlier revision',
  undelete: 'Restored from the Trash',
  migrate: 'Carried over from an older version',
  'resolve-conflict': 'Resolved a sync conflict',
  sync: 'Synced with the team server',
  'sync-merge': 'Merged with edits from the team server',
};

/** What kind of change made a revision, as a short phrase. */
export function commandLabel(command: string): string {
  return COMMAND_LABELS[command] ?? command;
}

/** What identifies a file's version: a new upload, a renamed or re-described file all differ. */
function fileSignature(file: FileObject | null | undefined): string {
  if (!file) return '';
  return JSON.stringify([
    fileIdOf(file) ?? '',
    file.md5Checksum ?? '',
    file.originalFilename ?? '',
    file.description ?? '',
  ]);
}

function sameValue(kind: FieldKind, a: unknown, b: unknown): boolean {
  switch (kind) {
    case 'cover':
      return fileSignature(a as FileObject | null) === fileSignature(b as FileObject | null);
    case 'files': {
      const left = (a as FileObject[] | undefined) ?? [];
      const right = (b as FileObject[] | undefined) ?? [];
      return (
        left.length === right.length &&
        left.every((file, index) => fileSignature(file) === fileSignature(right[index]))
      );
    }
    case 'tags': {
      const left = (a as string[] | undefined) ?? [];
      const right = (b as string[] | undefined) ?? [];
      return left.length === right.length && left.every((tag, index) => tag === right[index]);
    }
    default:
      return (a ?? '') === (b ?? '');
  }
}

/** The ids of every file a version of the portfolio has (cover, drafting, documents). */
export function fileIdsOf(detail: PortfolioDetail): Set<string> {
  const files: FileObject[] = [
    ...(detail.cover ? [detail.cover] : []),
    ...detail.draftingProcess,
    ...detail.additionalDocument,
  ];
  return new Set(files.map(fileIdOf).filter((id): id is string => id !== undefined));
}

export interface FieldComparison extends ComparedField {
  differs: boolean;
}

/** Every compared field of two versions of a portfolio, with whether they differ. */
export function compareRevisions(
  older: PortfolioDetail,
  current: PortfolioDetail,
): FieldComparison[] {
  return COMPARED_FIELDS.map((field) => ({
    ...field,
    differs: !sameValue(field.kind, older[field.key], current[field.key]),
  }));
}
