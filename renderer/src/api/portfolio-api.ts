import { Value } from '@sinclair/typebox/value';
import {
  COVER_SUBFIELDS,
  type BulkAnswer,
  type BulkEditBody,
  ListFileSchema,
  PortfolioDetailSchema,
  type Command,
  type CoverFile,
  type CreatePortfolioBody,
  type FacetKey,
  type FacetsResponse,
  type ListFile,
  type ListItem,
  type ListResponse,
  type PortfolioDetail,
  type UpdatePortfolioBody,
} from '../../../shared';
import { api, ok } from './api-client';

const BASE = '/api/v1/portfolio';

const encode = encodeURIComponent;

export function portfolioPath(portfolioId: string): string {
  return `${BASE}/${encode(portfolioId)}`;
}

/**
 * The interface's list fields: the cover's bytes are never asked for, cards load a
 * thumbnail instead.
 */
export const BASE_LIST_FIELDS = [
  'portfolioId',
  'projectTitle',
  'cover.fileId',
  'cover.originalFilename',
  'cover.mimeType',
  'cover.dimention.width',
  'cover.dimention.height',
];

/**
 * Keys this project asks the server to accept as a list-field extension, so gallery cards can
 * show category, member and badges without one detail request per card.
 */
export const EXTENDED_LIST_FIELDS = [
  'category',
  'memberBarcode',
  'published',
  'active',
  'staffPick',
];

/** A list item with the extension fields. */
export type GalleryItem = ListItem & {
  category?: string;
  memberBarcode?: string;
  published?: boolean;
  active?: boolean;
  staffPick?: boolean;
};

export interface GalleryPage extends Omit<ListResponse, 'lists'> {
  lists: GalleryItem[];
}

export interface ListParams {
  orderBy?: string;
  filter?: string;
  /** Full-text search (docs/API.md): every word, as a prefix, case and accents ignored. */
  q?: string;
  pageSize?: number;
  pageToken?: string;
}

/** The server is this build's own: it always takes the extension fields (shared LIST_FIELDS). */
export function listPortfolios(params: ListParams, signal?: AbortSignal): Promise<GalleryPage> {
  const query = { ...params, field: [...BASE_LIST_FIELDS, ...EXTENDED_LIST_FIELDS].join(',') };
  return ok(api.GET('/api/v1/portfolio', { params: { query }, signal }));
}

/** The values in use of `keys`, each with how many portfolios the caller sees have it. */
export function getFacets(
  keys: readonly FacetKey[],
  signal?: AbortSignal,
): Promise<FacetsResponse['facets']> {
  const query = { keys: keys.join(',') };
  return ok(api.GET('/api/v1/portfolio/facets', { params: { query }, signal })).then(
    (body) => body.facets,
  );
}

const LIST_SLOTS = ['draftingProcess', 'additionalDocument'] as const;
const FILE_KEYS: readonly string[] = ['cover', ...LIST_SLOTS];

/**
 * Every key of the detail except the files' base64 `data`: without `field` the server inlines
 * every file's bytes. Files are shown through the file and thumbnail endpoints instead.
 */
export const DETAIL_FIELDS_WITHOUT_DATA = [
  ...Object.keys(PortfolioDetailSchema.properties).filter((key) => !FILE_KEYS.includes(key)),
  ...COVER_SUBFIELDS.filter((sub) => sub !== 'data' && !sub.startsWith('dimention.')).map(
    (sub) => `cover.${sub}`,
  ),
  'cover.dimention',
  ...LIST_SLOTS.flatMap((slot) =>
    Object.keys(ListFileSchema.properties)
      .filter((sub) => sub !== 'data')
      .map((sub) => `${slot}.${sub}`),
  ),
];

const onPortfolio = (portfolioId: string) => ({ path: { portfolioId } });
const onFile = (portfolioId: string, fileId: string) => ({ path: { portfolioId, fileId } });

/**
 * The whole detail without any file bytes (images load through the file and thumbnail
 * endpoints). The document answers a union because `field` may select fewer keys; this checks,
 * with the shared schema, that every key came.
 */
export async function getPortfolio(
  portfolioId: string,
  signal?: AbortSignal,
): Promise<PortfolioDetail> {
  const answer = await ok(
    api.GET('/api/v1/portfolio/{portfolioId}', {
      params: {
        ...onPortfolio(portfolioId),
        query: { field: DETAIL_FIELDS_WITHOUT_DATA.join(',') },
      },
      signal,
    }),
  );
  if (!Value.Check(PortfolioDetailSchema, answer)) {
    throw new Error(`The server answered an incomplete portfolio "${portfolioId}".`);
  }
  return answer;
}

export function createPortfolio(body: CreatePortfolioBody) {
  return ok(api.POST('/api/v1/portfolio', { body }));
}

export function updatePortfolio(portfolioId: string, body: UpdatePortfolioBody) {
  return ok(api.PUT('/api/v1/portfolio/{portfolioId}', { params: onPortfolio(portfolioId), body }));
}

/** The fields every PUT must carry, taken from what the server last showed. */
export function requiredFieldsOf(detail: PortfolioDetail) {
  return {
    memberBarcode: detail.memberBarcode,
    category: detail.category,
    projectTitle: detail.projectTitle,
    projectDetail: detail.projectDetail,
  };
}

/** An admin action on a portfolio as it is: only the state changes, optional fields are kept. */
export function runCommand(
  detail: PortfolioDetail,
  command: Command,
  extra: Partial<UpdatePortfolioBody> = {},
) {
  return updatePortfolio(detail.portfolioId, {
    ...requiredFieldsOf(detail),
    ...extra,
    command,
    revision: detail.revision,
  });
}

export type FileObject = Partial<CoverFile> | Partial<ListFile>;

export function fileIdOf(file: FileObject): string | undefined {
  return 'fileId' in file && file.fileId ? file.fileId : 'fileID' in file ? file.fileID : undefined;
}

const FILE = '/api/v1/portfolio/{portfolioId}/files/{fileId}';

export function updateFileDescription(portfolioId: string, fileId: string, description: string) {
  return ok(api.PATCH(FILE, { params: onFile(portfolioId, fileId), body: { description } }));
}

export function deleteFile(portfolioId: string, fileId: string) {
  return ok(api.DELETE(FILE, { params: onFile(portfolioId, fileId) }));
}

/** The revision the page showed: a change made from a stale page is a 409, not a surprise. */
const expecting = (revision: number) => ({ 'if-match': `"${revision}"` });

/** The drafting images in a new order (every one of their ids, once). */
export function reorderDrafting(portfolioId: string, fileIds: string[], revision: number) {
  return ok(
    api.PUT('/api/v1/portfolio/{portfolioId}/draftingProcess/order', {
      params: { ...onPortfolio(portfolioId), header: expecting(revision) },
      body: { fileIds },
    }),
  );
}

/** A drafting image becomes the cover; the old cover takes its place among the drafting images. */
export function makeCover(portfolioId: string, fileId: string, revision: number) {
  return ok(
    api.POST(`${FILE}/make-cover`, {
      params: { ...onFile(portfolioId, fileId), header: expecting(revision) },
    }),
  );
}

/** One description for several files, in one revision. */
export function describeFiles(
  portfolioId: string,
  fileIds: string[],
  description: string,
  revision: number,
) {
  return ok(
    api.PATCH('/api/v1/portfolio/{portfolioId}/files', {
      params: { ...onPortfolio(portfolioId), header: expecting(revision) },
      body: { fileIds, description },
    }),
  );
}

/** Images and downloads are fetched as bytes: `<img src>` cannot carry the session header. */
export function fetchThumbnail(
  portfolioId: string,
  fileId: string,
  width: number,
  signal?: AbortSignal,
) {
  const params = { ...onFile(portfolioId, fileId), query: { width } };
  return ok(api.GET(`${FILE}/thumbnail`, { params, parseAs: 'blob', signal }));
}

export function fetchFile(portfolioId: string, fileId: string, signal?: AbortSignal) {
  return ok(api.GET(FILE, { params: onFile(portfolioId, fileId), parseAs: 'blob', signal }));
}

/** What GET /api/v1/export takes: the list's filter, search and order, and the format. */
export interface ExportParams {
  format: 'zip' | 'csv' | 'pdf';
  orderBy?: string;
  filter?: string;
  q?: string;
  /** Comma-separated portfolioIds: only these (a selection). */
  ids?: string;
}

/** The export of the portfolios a list shows (DESIGN §11), as a file to save. */
export function exportPortfolios(query: ExportParams, signal?: AbortSignal): Promise<Blob> {
  return ok(api.GET('/api/v1/export', { params: { query }, parseAs: 'blob', signal }));
}

/** A bulk edit (docs/API.md §19): each selected portfolio changed on its own, with an undo. */
export function bulkEdit(body: BulkEditBody): Promise<BulkAnswer> {
  return ok(api.POST('/api/v1/portfolio/bulk', { body }));
}

/** Undoes a whole bulk edit; the answer has the same shape (its token redoes it). */
export function bulkUndo(undoToken: string): Promise<BulkAnswer> {
  return ok(api.POST('/api/v1/portfolio/bulk/undo', { body: { undoToken } }));
}
