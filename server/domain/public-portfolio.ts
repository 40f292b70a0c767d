import {
  FILE_SLOTS,
  fieldKeysWith,
  isRasterImage,
  PORTFOLIO_FIELDS,
  type FileSlot,
  type KeysWith,
  type PortfolioRecord,
  type StoredFile,
} from '../../shared';
import { sanitizeHtml } from './sanitize-html';

/** What a share page shows apart from its fields: the id (in its link) and the files. */
type NotShownAsField = 'portfolioId' | FileSlot;

export type PublicFieldKey = Exclude<KeysWith<'public', true>, NotShownAsField>;

/**
 * The fields a portfolio shows outside the app (DESIGN §15): the field table's `public` column
 * (the showcase reads the same one), less the id and the files, which a page shows apart. Never
 * memberBarcode, authors, history, revision numbers or additional documents.
 */
export const PUBLIC_FIELD_KEYS = fieldKeysWith('public', true).filter(
  (key): key is PublicFieldKey => key !== 'portfolioId' && !isFileSlot(key),
);

function isFileSlot(key: string): key is FileSlot {
  return (FILE_SLOTS as readonly string[]).includes(key);
}

/** One public field as shown: its label (from the field table) and its value. */
export type PublicField =
  | { key: PublicFieldKey; label: string; kind: 'text'; value: string }
  | { key: PublicFieldKey; label: string; kind: 'tags'; value: string[] }
  | { key: PublicFieldKey; label: string; kind: 'html'; value: string }
  | { key: PublicFieldKey; label: string; kind: 'flag'; value: boolean };

/** An image a public page may show: only raster covers and drafting-process images. */
export interface PublicImage {
  fileId: string;
  sha256: string;
  description: string;
  width: number | null;
  height: number | null;
}

export interface PublicPortfolio {
  projectTitle: string;
  /** Every other public field with a value, title excluded, in the detail page's order. */
  fields: PublicField[];
  cover: PublicImage | null;
  drafting: PublicImage[];
}

const imageOf = (file: StoredFile): PublicImage | null =>
  isRasterImage(file.mimeType)
    ? {
        fileId: file.fileId,
        sha256: file.sha256,
        description: file.description,
        width: file.dimention?.width ?? null,
        height: file.dimention?.height ?? null,
      }
    : null;

/**
 * What a public page may show of a record; the certificate description sanitized again on the
 * way out (it was when stored; a page outside the app trusts nothing).
 */
export function publicPortfolio(record: PortfolioRecord): PublicPortfolio {
  const fields: PublicField[] = [];
  const ordered = [...PUBLIC_FIELD_KEYS].sort(
    (a, b) => (PORTFOLIO_FIELDS[a].shown ?? 99) - (PORTFOLIO_FIELDS[b].shown ?? 99),
  );
  for (const key of ordered) {
    if (key === 'projectTitle') continue;
    const { label, kind } = PORTFOLIO_FIELDS[key];
    const value: unknown = record[key];
    if (kind === 'tags' && Array.isArray(value) && value.length > 0)
      fields.push({ key, label, kind, value: value as string[] });
    else if (kind === 'html' && typeof value === 'string' && value.trim() !== '') {
      const clean = sanitizeHtml(value);
      if (clean.trim() !== '') fields.push({ key, label, kind, value: clean });
    } else if (kind === 'flag' && value === true) fields.push({ key, label, kind, value });
    else if (kind === 'text' && typeof value === 'string' && value.trim() !== '')
      fields.push({ key, label, kind, value });
  }
  return { projectTitle: record.projectTitle, fields, ...publicImages(record) };
}

/** The record's images a public page may show: a raster cover and raster drafting images. */
export function publicImages(record: PortfolioRecord): Pick<PublicPortfolio, 'cover' | 'drafting'> {
  const cover = record.cover ? imageOf(record.cover) : null;
  const drafting = (record.draftingProcess ?? [])
    .map(imageOf)
    .filter((image): image is PublicImage => image !== null);
  return { cover, drafting };
}

/** The public image `fileId` of a record, or undefined: nothing else is ever served publicly. */
export function publicImage(record: PortfolioRecord, fileId: string): PublicImage | undefined {
  const { cover, drafting } = publicImages(record);
  return [cover, ...drafting].find((image) => image?.fileId === fileId) ?? undefined;
}
