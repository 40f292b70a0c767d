import type { FileSlot } from '../../../shared';
import { ApiError, NetworkError } from './api-error';
import { authHeaders, errorFromResponse } from './api-client';
import type { paths } from './openapi';
import { type FileObject, portfolioPath } from './portfolio-api';

type JsonOf<Answer> = Answer extends { content: { 'application/json': infer Body } } ? Body : never;
/** What the three upload operations answer: the File object, in its slot's spelling. */
type Uploaded =
  | JsonOf<paths['/api/v1/portfolio/{portfolioId}/cover']['put']['responses'][200]>
  | JsonOf<paths['/api/v1/portfolio/{portfolioId}/draftingProcess']['post']['responses'][201]>
  | JsonOf<paths['/api/v1/portfolio/{portfolioId}/additionalDocument']['post']['responses'][201]>;

export interface UploadHandle {
  /** The files added, in the order sent. */
  promise: Promise<FileObject[]>;
  abort(): void;
}

/** Where each slot uploads (DESIGN §5): the cover is replaced, the lists are appended to. */
function uploadTarget(
  portfolioId: string,
  slot: FileSlot,
): { method: 'PUT' | 'POST'; url: string } {
  const url = `${portfolioPath(portfolioId)}/${slot}`;
  return { method: slot === 'cover' ? 'PUT' : 'POST', url };
}

/**
 * Uploads files as one multipart request with XMLHttpRequest, because fetch() cannot report
 * upload progress. Several files to a list are one change, one revision (DESIGN §16); the cover
 * takes one. `onProgress` gets a fraction between 0 and 1.
 */
export function uploadFiles(
  portfolioId: string,
  slot: FileSlot,
  files: File[],
  onProgress: (fraction: number) => void,
): UploadHandle {
  const xhr = new XMLHttpRequest();
  const { method, url } = uploadTarget(portfolioId, slot);
  const promise = new Promise<FileObject[]>((resolve, reject) => {
    xhr.open(method, url);
    xhr.responseType = 'text';
    for (const [name, value] of Object.entries(authHeaders())) xhr.setRequestHeader(name, value);
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable && event.total > 0) onProgress(event.loaded / event.total);
    };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300 && xhr.responseText) {
        onProgress(1);
        const uploaded: Uploaded = JSON.parse(xhr.responseText);
        resolve('files' in uploaded ? uploaded.files : [uploaded]);
        return;
      }
      const response = new Response(xhr.responseText || null, {
        status: xhr.status,
        headers: { 'Content-Type': xhr.getResponseHeader('Content-Type') ?? 'application/json' },
      });
      errorFromResponse(response).then(reject, () => reject(new ApiError(xhr.status, null)));
    };
    xhr.onerror = () => reject(new NetworkError());
    xhr.onabort = () => reject(new DOMException('Upload cancelled', 'AbortError'));
    const form = new FormData();
    for (const file of files) form.append('file', file, file.name);
    xhr.send(form);
  });
  return { promise, abort: () => xhr.abort() };
}
