import { ApiError, NetworkError } from './api-error';
import { authHeaders, errorFromResponse } from './api-client';
import type { paths } from './openapi';

/** What `POST /api/v1/import` answers: what became of each portfolio in the ZIP. */
export type ImportReport =
  paths['/api/v1/import']['post']['responses'][200]['content']['application/json'];

export interface ImportHandle {
  promise: Promise<ImportReport>;
  abort(): void;
}

/**
 * Sends an export ZIP as the raw body, with XMLHttpRequest because fetch() cannot report upload
 * progress. `onProgress` gets the fraction of the ZIP sent, between 0 and 1; once it is all sent
 * the server checks the whole ZIP before writing anything, then answers the report.
 */
export function importZip(file: File, onProgress: (fraction: number) => void): ImportHandle {
  const xhr = new XMLHttpRequest();
  const promise = new Promise<ImportReport>((resolve, reject) => {
    xhr.open('POST', '/api/v1/import');
    xhr.responseType = 'text';
    for (const [name, value] of Object.entries(authHeaders())) xhr.setRequestHeader(name, value);
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.setRequestHeader('Content-Type', 'application/zip');
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable && event.total > 0) onProgress(event.loaded / event.total);
    };
    xhr.upload.onload = () => onProgress(1);
    xhr.onload = () => {
      if (xhr.status === 200 && xhr.responseText) {
        resolve(JSON.parse(xhr.responseText) as ImportReport);
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
