import type {
  Command,
  CoverFile,
  CreatePortfolioBody,
  ListFile,
  ListItem,
  ListResponse,
  PortfolioCreated,
  PortfolioDetail,
  PortfolioUpdated,
  UpdatePortfolioBody,
} from '../../../shared';
import { apiBlob, apiRequest } from './api-client';

const BASE = '/api/v1/portfolio';

const encode = encodeURIComponent;

export function portfolioPath(portfolioId: string): string {
  return `${BASE}/${encode(portfolioId)}`;
}

export function filePath(portfolioId: string, fileId: string): string {
  return `${portfolioPath(portfolioId)}/files/${encode(fileId)}`;
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
  pageSize?: number;
  pageToken?: string;
}

/** The server is this build's own: it always takes the extension fields (shared LIST_FIELDS). */
export function listPortfolios(params: ListParams, signal?: AbortSignal): Promise<GalleryPage> {
  return apiRequest<GalleryPage>('GET', BASE, {
    query: { ...params, field: [...BASE_LIST_FIELDS, ...EXTENDED_LIST_FIELDS].join(',') },
    signal,
  });
}

/** Detail without any file bytes: images are loaded through the file and thumbnail endpoints. */
export function getPortfolio(portfolioId: string, signal?: AbortSignal): Promise<PortfolioDetail> {
  return apiRequest<PortfolioDetail>('GET', portfolioPath(portfolioId), { signal });
}

export function createPortfolio(body: CreatePortfolioBody): Promise<PortfolioCreated> {
  return apiRequest<PortfolioCreated>('POST', BASE, { body });
}

export function updatePortfolio(
  portfolioId: string,
  body: UpdatePortfolioBody,
): Promise<PortfolioUpdated> {
  return apiRequest<PortfolioUpdated>('PUT', portfolioPath(portfolioId), { body });
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

export function updateFileDescription(portfolioId: string, fileId: string, description: string) {
  return apiRequest<FileObject>('PATCH', filePath(portfolioId, fileId), { body: { description } });
}

export function deleteFile(portfolioId: string, fileId: string) {
  return apiRequest<void>('DELETE', filePath(portfolioId, fileId));
}

export function fetchThumbnail(
  portfolioId: string,
  fileId: string,
  width: number,
  signal?: AbortSignal,
) {
  return apiBlob(`${filePath(portfolioId, fileId)}/thumbnail`, { width }, signal);
}

export function fetchFile(portfolioId: string, fileId: string, signal?: AbortSignal) {
  return apiBlob(filePath(portfolioId, fileId), undefined, signal);
}
