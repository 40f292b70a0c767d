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
