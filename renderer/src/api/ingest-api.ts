import { api, authHeaders, errorFromResponse, ok } from './api-client';
import { ApiError, NetworkError } from './api-error';
import type { components } from './openapi';

export type IngestBody = components['schemas']['IngestBody'];
export type IngestResult = components['schemas']['IngestResult'];

/** The SHA-256 of a file's bytes, as lower-case hex, computed in the browser. */
export async function sha256Of(file: Blob): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', await file.arrayBuffer());
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** Those of `sha256s` the server lacks, asked 1000 at a time. */
export async function missingBlobs(sha256s: string[]): Promise<Set<string>> {
  const missing = new Set<string>();
  for (let start = 0; start < sha256s.length; start += 1000) {
    const answer = await ok(
      api.POST('/api/v1/blobs/missing', { body: { sha256: sha256s.slice(start, start + 1000) } }),
    );
    for (const sha of answer.missing) missing.add(sha);
  }
  return missing;
}

/**
 * Sends a file's bytes as the blob `sha256`, with XMLHttpRequest because fetch() cannot report
 * upload progress; `onBytes` gets the bytes sent since its last call.
 */
export function putBlob(sha256: string, file: Blob, onBytes: (bytes: number) => void) {
  return new Promise<void>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    let sent = 0;
    xhr.open('PUT', `/api/v1/blobs/${sha256}`);
    for (const [name, value] of Object.entries(authHeaders())) xhr.setRequestHeader(name, value);
    xhr.setRequestHeader('Content-Type', 'application/octet-stream');
    xhr.upload.onprogress = (event) => {
      onBytes(event.loaded - sent);
      sent = event.loaded;
    };
    xhr.onload = () => {
      onBytes(file.size - sent);
      if (xhr.status >= 200 && xhr.status < 300) return resolve();
      const response = new Response(xhr.responseText || null, {
        status: xhr.status,
        headers: { 'Content-Type': xhr.getResponseHeader('Content-Type') ?? 'application/json' },
      });
      errorFromResponse(response).then(reject, () => reject(new ApiError(xhr.status, null)));
    };
    xhr.onerror = () => reject(new NetworkError());
    xhr.send(file);
  });
}

/** Finds or makes the portfolio and attaches the blobs sent (POST /api/v1/portfolio/ingest). */
export function ingestPortfolio(body: IngestBody): Promise<IngestResult> {
  return ok(api.POST('/api/v1/portfolio/ingest', { body }));
}
