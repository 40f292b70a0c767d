import { ApiError, NetworkError } from './api-error';
import { authHeaders, errorFromResponse } from './api-client';
import type { paths } from './openapi';

/** What `POST /api/v1/import` answers: what became of each portfolio in the ZIP. */
export type ImportReport =
  paths['/api/v1/import']['post']['responses'][200]['content']['application/json'];

export interface ImportHandle<T = ImportReport> {
  promise: Promise<T>;
  abort(): void;
}

/**
 * Sends an export ZIP as the raw body. `onProgress` gets the fraction of the ZIP sent, between 0
 * and 1; once it is all sent the server checks the whole ZIP before writing anything, then
 * answers the report.
 */
export function importZip(file: File, onProgress: (fraction: number) => void): ImportHandle {
  return postFile<ImportReport>('/api/v1/import', file, 'application/zip', onProgress);
}

/**
 * POSTs a file as the raw body and answers the JSON the server sends back, with XMLHttpRequest
 * because fetch() cannot report upload progress (`onProgress`: the fraction sent, 0 to 1).
 */
export function postFile<T>(
  path: string,
  file: Blob,
  contentType: string,
  onProgress: (fraction: number) => void,
): ImportHandle<T> {
  const xhr = new XMLHttpRequest();
  const promise = new Promise<T>((resolve, reject) => {
    xhr.open('POST', path);
    xhr.responseType = 'text';
    for (const [name, value] of Object.entries(authHeaders())) xhr.setRequestHeader(name, value);
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.setRequestHeader('Content-Type', contentType);
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable && event.total > 0) onProgress(event.loaded / event.total);
    };
    xhr.upload.onload = () => onProgress(1);
    xhr.onload = () => {
      if (xhr.status === 200 && xhr.responseText) {
        resolve(JSON.parse(xhr.responseText) as T);
        return;
      }
      const response = new Response(xhr.responseText || null, {
        status: xhr.status,
        headers: { 'Content-Type': xhr.getResponseHeader('Content-Type') ?? 'application/json' },
      });
      errorFromResponse(response).then(reject, () => reject(new ApiError(xhr.status, null)));
    };
    xhr.onerror = () => reject(new NetworkError());
    xhr.onabort = () => reject(new DOMException('Import cancelled', 'AbortError'));
    xhr.send(file);
  });
  return { promise, abort: () => xhr.abort() };
}
