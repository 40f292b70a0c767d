import { extname } from 'node:path';

const MAX_NAME_LENGTH = 255;
const MAX_EXTENSION_LENGTH = 16;

/**
 * The name a client gave, made safe to keep and show: only the last path segment (clients send
 * `C:\Users\…\a.jpg` or `../../a.jpg`), no control or bidi-override characters (which can disguise
 * `gpj.exe` as `exe.jpg`), NFC, at most 255 characters with the extension kept.
 */
export function cleanFilename(raw: string | undefined): string {
  let name = (raw ?? '')
    .normalize('NFC')
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    .replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '');
  name = (name.split(/[\\/]/).pop() ?? '').trim();
  if (name === '' || /^\.+$/.test(name)) return 'file';
  const chars = [...name];
  if (chars.length <= MAX_NAME_LENGTH) return name;
  const ext = extname(name);
  const keep = ext.length > 1 && ext.length <= MAX_EXTENSION_LENGTH + 1 ? [...ext] : [];
  return chars.slice(0, MAX_NAME_LENGTH - keep.length).join('') + keep.join('');
}

/** Extensions that already name a file of this sniffed type, so none is appended. */
const EXTENSION_ALIASES: Record<string, readonly string[]> = {
  jpg: ['jpg', 'jpeg', 'jpe', 'jfif'],
  tif: ['tif', 'tiff'],
  txt: ['txt', 'text', 'md', 'markdown', 'log'],
  csv: ['csv'],
};

/**
 * The download name: the original name, with the sniffed extension appended when the name's own
 * extension does not match it, so `invoice.pdf.exe` holding a PDF saves as `….exe.pdf`.
 */
export function downloadName(originalFilename: string, extension: string): string {
  const own = extname(originalFilename).slice(1).toLowerCase();
  const accepted = EXTENSION_ALIASES[extension] ?? [extension];
  return accepted.includes(own) ? originalFilename : `${originalFilename}.${extension}`;
}

/**
 * `Content-Disposition` with an ASCII fallback (quotes, backslashes and non-ASCII replaced) and
 * the exact name in RFC 5987/6266 `filename*` form.
 */
export function contentDisposition(type: 'inline' | 'attachment', filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\%;]/g, '_');
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `${type}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
