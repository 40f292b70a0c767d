/**
 * Raster images the server reads with sharp, makes thumbnails of and serves inline; the renderer
 * shows only these as images. Every other type is served as an attachment (DESIGN §5). The value
 * is the extension the server gives such a file.
 */
export const RASTER_TYPES: ReadonlyMap<string, string> = new Map([
  ['image/jpeg', 'jpg'],
  ['image/png', 'png'],
  ['image/apng', 'png'],
  ['image/webp', 'webp'],
  ['image/gif', 'gif'],
  ['image/avif', 'avif'],
  ['image/tiff', 'tif'],
]);

export const isRasterImage = (mimeType: string): boolean => RASTER_TYPES.has(mimeType);

/** What a file is, as the server decides it from its bytes; it drives which slot accepts it. */
export type FileKind = 'image' | 'pdf' | 'office' | 'text' | 'archive' | 'other';

/** What people call each type the server accepts; the UI shows these, never a media type. */
const TYPE_NAMES: Readonly<Record<string, string>> = {
  'image/jpeg': 'JPEG image',
  'image/png': 'PNG image',
  'image/apng': 'Animated PNG image',
  'image/webp': 'WebP image',
  'image/gif': 'GIF image',
  'image/avif': 'AVIF image',
  'image/tiff': 'TIFF image',
  'image/svg+xml': 'SVG drawing',
  'application/pdf': 'PDF document',
  'application/msword': 'Word document',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'Word document',
  'application/vnd.ms-excel': 'Excel spreadsheet',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'Excel spreadsheet',
  'application/vnd.ms-powerpoint': 'PowerPoint presentation',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation':
    'PowerPoint presentation',
  'application/vnd.oasis.opendocument.text': 'OpenDocument text',
  'application/vnd.oasis.opendocument.spreadsheet': 'OpenDocument spreadsheet',
  'application/vnd.oasis.opendocument.presentation': 'OpenDocument presentation',
  'application/rtf': 'Rich text document',
  'text/plain': 'Text file',
  'text/csv': 'CSV table',
  'text/markdown': 'Markdown text',
  'application/zip': 'ZIP archive',
};

const FAMILY_NOUNS: Readonly<Record<string, string>> = {
  image: 'image',
  video: 'video',
  audio: 'audio',
  text: 'text file',
};

/**
 * A file's type in words ("JPEG image", "Word document"); for a type without a name, its
 * extension and family ("HEIC image", "MKV video"), else just "File".
 */
export function fileTypeName(mimeType: string | undefined, extension?: string): string {
  const type = (mimeType ?? '').split(';')[0]!.trim().toLowerCase();
  const known = TYPE_NAMES[type];
  if (known) return known;
  const noun = FAMILY_NOUNS[type.split('/')[0]!] ?? 'file';
  const ext = (extension ?? '').replace(/^\./, '').toUpperCase();
  if (ext) return `${ext} ${noun}`;
  return noun.charAt(0).toUpperCase() + noun.slice(1);
}
