import { createReadStream } from 'node:fs';
import { extname } from 'node:path';
import type Sharp from 'sharp';
import { RASTER_TYPES, type FileKind } from '../../shared';
import { ApiError } from '../errors';
import { loadSharp } from './load-sharp';

/**
 * What a file is, decided from its bytes alone (the client's name and Content-Type are never
 * trusted). `kind` drives which slot accepts it and how it is served.
 */
export interface Inspection {
  mimeType: string;
  /** Lower-case, without the dot, from the sniffed type. */
  extension: string;
  kind: FileKind;
  /** Pixel size after EXIF orientation; null for anything that is not a raster image. */
  dimention: { width: number; height: number } | null;
}

export type { FileKind };

const OFFICE_TYPES = new Set([
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'application/vnd.oasis.opendocument.text',
  'application/vnd.oasis.opendocument.spreadsheet',
  'application/vnd.oasis.opendocument.presentation',
  'application/rtf',
]);

/**
 * Legacy Office files are all "Compound File Binary" to a byte sniffer; the container is
 * verified from the bytes, and only then does the name's extension pick which of the three it is.
 */
const LEGACY_OFFICE: Record<string, string> = {
  doc: 'application/msword',
  xls: 'application/vnd.ms-excel',
  ppt: 'application/vnd.ms-powerpoint',
};

export interface InspectOptions {
  size: number;
  /** The last bytes of the file (at least 64 KiB of them, or all), where end markers are. */
  tail: Buffer;
  /** Most pixels allowed in an image, checked from its header. */
  maxPixels: number;
  /** The client's file name: only used to tell legacy Office formats and CSV apart. */
  clientName: string;
}

/** Sniffs the type of the file at `path` and reads image dimensions from the header only. */
export async function inspectFile(path: string, options: InspectOptions): Promise<Inspection> {
  if (options.size === 0) throw unsupported('The file is empty.');
  // Imported on first use, like sharp: a start should not wait for the sniffers to load.
  const { fileTypeFromFile } = await import('file-type');
  const sniffed = await fileTypeFromFile(path);
  const clientExt = extname(options.clientName).slice(1).toLowerCase();
  if (!sniffed) return inspectText(path, options.size, clientExt);

  if (RASTER_TYPES.has(sniffed.mime)) {
    const dimention = await imageDimensions(path, options.maxPixels);
    return assertComplete(rasterImage(sniffed.mime, dimention), options.tail);
  }
  if (sniffed.mime === 'application/pdf')
    return { mimeType: sniffed.mime, extension: 'pdf', kind: 'pdf', dimention: null };
  if (OFFICE_TYPES.has(sniffed.mime))
    return { mimeType: sniffed.mime, extension: sniffed.ext, kind: 'office', dimention: null };
  if (sniffed.ext === 'cfb' && LEGACY_OFFICE[clientExt]) {
    const mimeType = LEGACY_OFFICE[clientExt];
    return { mimeType, extension: clientExt, kind: 'office', dimention: null };
  }
  if (sniffed.mime === 'application/zip')
    return { mimeType: sniffed.mime, extension: 'zip', kind: 'archive', dimention: null };
  return { mimeType: sniffed.mime, extension: sniffed.ext, kind: 'other', dimention: null };
}

/**
 * A JPEG or PNG inspected from the first bytes of the upload (`head`), while the rest is still
 * arriving: both have their type, size and orientation up front. Null when the head cannot tell
 * (another type, or a header longer than the head): then the whole file is inspected. The head
 * gives the same answer as the file would: the type is decided by a signature at its start, and
 * a JPEG's EXIF orientation must come before its pixels.
 */
export async function inspectHead(head: Buffer, maxPixels: number): Promise<Inspection | null> {
  const { fileTypeFromBuffer } = await import('file-type');
  const sniffed = await fileTypeFromBuffer(head);
  if (!sniffed || !HEAD_TYPES.has(sniffed.mime)) return null;
  let metadata: Sharp.Metadata;
  try {
    metadata = await loadSharp()(head, { limitInputPixels: false }).metadata();
  } catch {
    return null; // damaged, or cut off by the head's end: the file will tell which
  }
  return rasterImage(sniffed.mime, checkedDimensions(metadata, maxPixels));
}

/** The inspection of a raster image of a sniffed type (APNG is served as PNG). */
function rasterImage(
  sniffedMime: string,
  dimention: { width: number; height: number },
): Inspection {
  const mimeType = sniffedMime === 'image/apng' ? 'image/png' : sniffedMime;
  return { mimeType, extension: RASTER_TYPES.get(sniffedMime)!, kind: 'image', dimention };
}

const HEAD_TYPES = new Set(['image/jpeg', 'image/png', 'image/apng']);

/**
 * Reads width and height from the image header (sharp does not decode pixels for metadata), and
 * refuses a pixel bomb before anything ever decodes it.
 */
async function imageDimensions(
  path: string,
  maxPixels: number,
): Promise<{ width: number; height: number }> {
  let metadata: Sharp.Metadata;
  try {
    // Reading the header decodes no pixels; sharp's own limit would refuse the header of a big
    // image with a vague error, so it is off here and ours is applied below instead.
    metadata = await loadSharp()(path, { limitInputPixels: false }).metadata();
  } catch {
    throw unsupported('The image is damaged or not readable.');
  }
  return checkedDimensions(metadata, maxPixels);
}

/** The size after EXIF orientation, if it is within the pixel limit. */
function checkedDimensions(
  metadata: Sharp.Metadata,
  maxPixels: number,
): { width: number; height: number } {
  const { width, height } = metadata.autoOrient;
  if (!width || !height) throw unsupported('The image has no size.');
  if (width * height > maxPixels) {
    throw new ApiError(
      'IMAGE_TOO_LARGE',
      `The image is ${width}×${height} pixels; the limit is ${+(maxPixels / 1e6).toFixed(1)} megapixels.`,
    );
  }
  return { width, height };
}

/**
 * A JPEG or PNG cut short still has a good header, so sharp's metadata accepts it; decoding it to
 * find out would cost more than the whole upload. Their end markers are cheap to check instead,
 * in the file's last bytes (`tail`): a JPEG ends with EOI (FF D9; cameras may pad after it), a
 * PNG with its IEND chunk. Returns the inspection when complete.
 */
export function assertComplete(inspection: Inspection, tail: Buffer): Inspection {
  const complete =
    inspection.mimeType === 'image/jpeg'
      ? tail.includes(JPEG_END)
      : inspection.mimeType !== 'image/png' || tail.includes(PNG_END);
  if (!complete) throw unsupported('The image is incomplete (the file was cut short).');
  return inspection;
}

const JPEG_END = Buffer.from([0xff, 0xd9]);
const PNG_END = Buffer.from('IEND', 'latin1');

const TEXT_SAMPLE_BYTES = 64 * 1024;

/**
 * The fallback for what the byte sniffer cannot name. Only well-formed UTF-8 (or ASCII) without
 * NUL or other control characters counts as text, checked over the whole file; markup is never
 * text/plain, so HTML or SVG cannot come in disguised as a note.
 */
async function inspectText(path: string, size: number, clientExt: string): Promise<Inspection> {
  const sample = await readTextIfWellFormed(path, size);
  if (sample === null)
    return {
      mimeType: 'application/octet-stream',
      extension: 'bin',
      kind: 'other',
      dimention: null,
    };
  const head = sample.replace(/^\uFEFF/, '').trimStart();
  if (head.startsWith('<')) {
    const svg = /<svg[\s>]/i.test(head.slice(0, 4096));
    return {
      mimeType: svg ? 'image/svg+xml' : 'text/html',
      extension: svg ? 'svg' : 'html',
      kind: 'other',
      dimention: null,
    };
  }
  if (looksLikeCsv(sample, clientExt === 'csv'))
    return { mimeType: 'text/csv', extension: 'csv', kind: 'text', dimention: null };
  return { mimeType: 'text/plain', extension: 'txt', kind: 'text', dimention: null };
}

/** Returns the first 64 KiB as text, or null when any part of the file is not clean UTF-8. */
async function readTextIfWellFormed(path: string, size: number): Promise<string | null> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let sample = '';
  let read = 0;
  try {
    for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
      const text = decoder.decode(chunk, { stream: true });
      // Tab, LF, FF and CR are text; other C0 controls, DEL and NUL mean binary.
      // eslint-disable-next-line no-control-regex -- matching control characters is the point
      if (/[\u0000-\u0008\u000B\u000E-\u001F\u007F]/.test(text)) return null;
      if (read < TEXT_SAMPLE_BYTES) sample += text;
      read += chunk.byteLength;
    }
    decoder.decode();
  } catch {
    return null; // not UTF-8
  }
  return read === size ? sample.slice(0, TEXT_SAMPLE_BYTES) : null;
}

/**
 * CSV only when every sampled line has the same number (at least two) of quote-aware fields for
 * one delimiter. Prose has commas too, so without a ".csv" name it takes three lines or more.
 */
export function looksLikeCsv(text: string, namedCsv: boolean): boolean {
  const lines = text.split(/\r?\n/);
  if (lines.length > 1 && text.length >= TEXT_SAMPLE_BYTES) lines.pop(); // may be cut off
  const rows = lines.filter((line) => line.length > 0).slice(0, 50);
  if (rows.length < (namedCsv ? 2 : 3)) return false;
  return [',', ';', '\t'].some((delimiter) => {
    const counts = rows.map((row) => fieldCount(row, delimiter));
    const first = counts[0] ?? -1;
    return first >= 2 && counts.every((count) => count === first);
  });
}

/** Fields in one CSV line; -1 when a quote is left open (a multi-line field: not judged). */
function fieldCount(line: string, delimiter: string): number {
  let fields = 1;
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const char = line[i];
    if (char === '"') {
      if (quoted && line[i + 1] === '"') i++;
      else quoted = !quoted;
    } else if (char === delimiter && !quoted) {
      fields++;
    }
  }
  return quoted ? -1 : fields;
}

function unsupported(message: string): ApiError {
  return new ApiError('UNSUPPORTED_FILE_TYPE', message);
}
