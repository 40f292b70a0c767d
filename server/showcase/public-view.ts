/**
 * What the public showcase may show of a portfolio (DESIGN §15), as one pure function: the single
 * place the public field list is applied. The list itself is the `public` column of
 * shared/portfolio-fields.ts; files leave only as images (their bytes through derivatives), and
 * additional documents only when an admin opted them in.
 */
import {
  fieldKeysWith,
  isRasterImage,
  PORTFOLIO_FIELDS,
  type FieldRow,
  type KeysWith,
  type PortfolioRecord,
  type StoredFile,
} from '../../shared';
import { sanitizeHtml } from '../domain/sanitize-html';

/** The keys the showcase shows, in table order. */
export const PUBLIC_KEYS = fieldKeysWith('public', true);

type PublicKey = KeysWith<'public', true>;
type FileKey = 'cover' | 'draftingProcess';

/** An image as visitors see it (its bytes only as derivatives, or the original if opted in). */
export interface PublicImage {
  fileId: string;
  width: number;
  height: number;
  /** The caption the curator wrote (the alt text), or "". */
  description: string;
  mimeType: string;
}

/** An additional document, when an admin made documents public. */
export interface PublicDocument {
  fileId: string;
  name: string;
  mimeType: string;
  size: number;
}

export type PublicView = { [K in Exclude<PublicKey, FileKey>]: PortfolioRecord[K] } & {
  cover: PublicImage | null;
  draftingProcess: PublicImage[];
  /** Empty unless documents are public. */
  additionalDocument: PublicDocument[];
};

export interface PublicViewOptions {
  publicDocuments: boolean;
}

/** Is this record on the showcase at all? (Unpublished or inactive: as if it never existed.) */
export function isPublic(record: Pick<PortfolioRecord, 'published' | 'active'>): boolean {
  return record.published === true && record.active === true;
}

function imageOf(file: StoredFile | null | undefined): PublicImage | null {
  if (!file || !file.dimention || !isRasterImage(file.mimeType)) return null;
  return {
    fileId: file.fileId,
    width: file.dimention.width,
    height: file.dimention.height,
    description: file.description,
    mimeType: file.mimeType,
  };
}

/** The public view of a published, active portfolio (call isPublic first). */
export function publicViewOf(record: PortfolioRecord, options: PublicViewOptions): PublicView {
  const view: Record<string, unknown> = {};
  for (const key of PUBLIC_KEYS) {
    const row: FieldRow = PORTFOLIO_FIELDS[key];
    const value = record[key];
    switch (row.kind) {
      case 'html':
        // Sanitized again on the way out: what the store holds may predate today's allow-list.
        view[key] = sanitizeHtml(typeof value === 'string' ? value : '');
        break;
      case 'cover':
        view[key] = imageOf(value as StoredFile | null);
        break;
      case 'files':
        view[key] = ((value as StoredFile[] | undefined) ?? []).flatMap(
          (file) => imageOf(file) ?? [],
        );
        break;
      case 'tags':
        view[key] = [...((value as string[] | undefined) ?? [])];
        break;
      default:
        view[key] = value ?? '';
    }
  }
  view.additionalDocument = options.publicDocuments
    ? record.additionalDocument.map((file) => ({
        fileId: file.fileId,
        name: file.originalFilename,
        mimeType: file.mimeType,
        size: file.size,
      }))
    : [];
  return view as PublicView;
}

/** Every image of a view, the cover first. */
export function imagesOf(view: PublicView): PublicImage[] {
  return [...(view.cover ? [view.cover] : []), ...view.draftingProcess];
}

/** The stored file behind a public image of a public portfolio, or null: never any other blob. */
export function publicImageFile(record: PortfolioRecord, fileId: string): StoredFile | null {
  if (!isPublic(record)) return null;
  const files = [...(record.cover ? [record.cover] : []), ...record.draftingProcess];
  const file = files.find((candidate) => candidate.fileId === fileId);
  return file && imageOf(file) ? file : null;
}

/** An additional document of a public portfolio, when documents are public; else null. */
export function publicDocumentFile(
  record: PortfolioRecord,
  fileId: string,
  options: PublicViewOptions,
): StoredFile | null {
  if (!isPublic(record) || !options.publicDocuments) return null;
  return record.additionalDocument.find((file) => file.fileId === fileId) ?? null;
}

/** What a gallery card shows: a few public fields, read from a list item. */
export type PublicCard = Pick<
  PublicView,
  'portfolioId' | 'projectTitle' | 'category' | 'staffPick' | 'cover'
>;

/** The list's `field` that reads exactly what a card needs. */
export const CARD_FIELDS =
  'portfolioId,projectTitle,category,staffPick,cover.fileId,cover.mimeType,cover.description,cover.dimention';

/** A card from a list item (the list's cover has the fileId and dimention of the stored file). */
export function publicCardOf(item: Record<string, unknown>): PublicCard {
  const cover = item.cover as
    | { fileId: string; mimeType: string; description: string; dimention: StoredFile['dimention'] }
    | null
    | undefined;
  return {
    portfolioId: String(item.portfolioId),
    projectTitle: String(item.projectTitle ?? ''),
    category: String(item.category ?? ''),
    staffPick: item.staffPick === true,
    cover:
      cover && cover.dimention && isRasterImage(cover.mimeType)
        ? {
            fileId: cover.fileId,
            width: cover.dimention.width,
            height: cover.dimention.height,
            description: cover.description,
            mimeType: cover.mimeType,
          }
        : null,
  };
}
