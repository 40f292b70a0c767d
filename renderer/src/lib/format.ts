/** Display helpers: sizes, dates in the user's own locale, and a file's kind. */

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

export function isRasterImage(mimeType: string | undefined): boolean {
  return Boolean(mimeType && /^image\/(png|jpeg|gif|webp|avif|bmp|tiff)$/.test(mimeType));
}

/** A short label for a document's type, shown as its icon. */
export function fileKindLabel(extension: string | undefined, mimeType: string | undefined): string {
  if (isRasterImage(mimeType)) return 'IMG';
  const ext = (extension ?? '').toLowerCase();
  if (ext) return ext.slice(0, 4).toUpperCase();
  if (mimeType === 'application/pdf') return 'PDF';
  return 'FILE';
}
