/**
 * Words a curator understands, for things the server and the renderer both say: how long to
 * wait, and what kind of file something is (never a MIME type).
 */

/** "15 minutes", "1 minute", "40 seconds", "2 hours": a wait, rounded up to its largest unit. */
export function waitInWords(seconds: number): string {
  const whole = Math.max(1, Math.ceil(seconds));
  const [amount, unit] =
    whole < 60
      ? [whole, 'second']
      : whole < 3600
        ? [Math.ceil(whole / 60), 'minute']
        : [Math.ceil(whole / 3600), 'hour'];
  return `${amount} ${unit}${amount === 1 ? '' : 's'}`;
}

const KIND_NAMES: Record<string, string> = {
  'image/jpeg': 'a JPEG image',
  'image/png': 'a PNG image',
  'image/apng': 'an animated PNG image',
  'image/webp': 'a WebP image',
  'image/gif': 'a GIF image',
  'image/avif': 'an AVIF image',
  'image/tiff': 'a TIFF image',
  'image/bmp': 'a BMP image',
  'image/svg+xml': 'an SVG drawing',
  'image/heic': 'a HEIC photo',
  'image/heif': 'a HEIF photo',
  'image/vnd.adobe.photoshop': 'a Photoshop file',
  'image/x-icon': 'an icon file',
  'application/pdf': 'a PDF document',
  'application/msword': 'a Word document',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'a Word document',
  'application/vnd.ms-excel': 'an Excel spreadsheet',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'an Excel spreadsheet',
  'application/vnd.ms-powerpoint': 'a PowerPoint presentation',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation':
    'a PowerPoint presentation',
  'application/vnd.oasis.opendocument.text': 'an OpenDocument text',
  'application/vnd.oasis.opendocument.spreadsheet': 'an OpenDocument spreadsheet',
  'application/vnd.oasis.opendocument.presentation': 'an OpenDocument presentation',
  'application/rtf': 'a rich-text document',
  'text/plain': 'a plain text file',
  'text/csv': 'a CSV table',
  'text/html': 'a web page',
  'application/zip': 'a zip archive',
  'application/x-7z-compressed': 'a 7-Zip archive',
  'application/x-rar-compressed': 'a RAR archive',
  'application/vnd.rar': 'a RAR archive',
  'application/gzip': 'a gzip archive',
  'application/x-tar': 'a tar archive',
  'application/x-msdownload': 'a Windows program',
  'application/x-dosexec': 'a Windows program',
  'application/vnd.microsoft.portable-executable': 'a Windows program',
  'application/x-msi': 'a Windows installer',
  'application/x-elf': 'a program',
  'application/x-executable': 'a program',
  'application/x-mach-binary': 'a Mac program',
  'application/x-apple-diskimage': 'a Mac disk image',
  'application/x-sqlite3': 'a database file',
  'application/wasm': 'a WebAssembly program',
};

const FAMILY_NAMES: Record<string, string> = {
  image: 'image',
  audio: 'sound file',
  video: 'video',
  font: 'font',
  model: '3D model',
};

/**
 * What a file is, in words ("a Windows program", "a PDF document"), from the type the server
 * sniffed and its extension; a type without a name reads by its family or extension.
 */
export function fileKindName(mimeType: string, extension?: string): string {
  const named = KIND_NAMES[mimeType];
  if (named) return named;
  const ext = (extension ?? '').replace(/^\./, '').toUpperCase();
  const family = FAMILY_NAMES[mimeType.split('/')[0] ?? ''];
  // An abbreviation read letter by letter takes "an" before a vowel sound: "an MP4 video".
  const article = /^[AEIOUFHLMNRSX]/.test(ext) ? 'an' : 'a';
  if (family) return ext ? `${article} ${ext} ${family}` : `a ${family}`;
  return ext ? `a .${ext.toLowerCase()} file` : 'a file of a kind this library does not know';
}

/** The sentence's first letter in upper case. */
export function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
