/** Display helpers: sizes, dates in the user's own locale, and a file's kind. */
import { isRasterImage as isSharedRasterImage } from '../../../shared/media-types';

const UNITS = ['bytes', 'KB', 'MB', 'GB'];

export function formatBytes(size: number | undefined): string {
  if (size === undefined) return '';
  let value = size;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${size} bytes` : `${value.toFixed(value < 10 ? 1 : 0)} ${UNITS[unit]}`;
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export function formatDate(timestamp: number | undefined): string {
  return timestamp === undefined ? '' : dateFormat.format(new Date(timestamp));
}

/** Shown as an image only if the server would serve it inline: the server's own list. */
export function isRasterImage(mimeType: string | undefined): boolean {
  return mimeType !== undefined && isSharedRasterImage(mimeType);
}

/** A short label for a document's type, shown as its icon. */
export function fileKindLabel(extension: string | undefined, mimeType: string | undefined): string {
  if (isRasterImage(mimeType)) return 'IMG';
  const ext = (extension ?? '').toLowerCase();
  if (ext) return ext.slice(0, 4).toUpperCase();
  if (mimeType === 'application/pdf') return 'PDF';
  return 'FILE';
}

const relativeFormat = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
const RELATIVE_STEPS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['second', 60],
  ['minute', 60],
  ['hour', 24],
  ['day', 30],
  ['month', 12],
  ['year', Infinity],
];

/** "just now", "5 minutes ago", "yesterday": how long ago `timestamp` was, seen from `now`. */
export function formatRelativeTime(timestamp: number, now = Date.now()): string {
  let value = (timestamp - now) / 1000;
  if (Math.abs(value) < 10) return 'just now';
  for (const [unit, size] of RELATIVE_STEPS) {
    if (Math.abs(value) < size) return relativeFormat.format(Math.round(value), unit);
    value /= size;
  }
  return formatDate(timestamp);
}
