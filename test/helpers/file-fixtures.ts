import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { checkAnswer, type TestServer } from './test-server';

/** Real images made by sharp: a small gradient-ish picture of `width`×`height`. */
function picture(width: number, height: number, noise = false) {
  if (noise) {
    const raw = Buffer.alloc(width * height * 3);
    for (let i = 0; i < raw.length; i++) raw[i] = (i * 2654435761) >>> 24;
    return sharp(raw, { raw: { width, height, channels: 3 } });
  }
  return sharp({
    create: { width, height, channels: 3, background: { r: 200, g: 80, b: 40 } },
  });
}

export const fixtures = {
  /** 40×20 stored, EXIF orientation 6 (rotate 90°): shown as 20×40. */
  jpegRotated: () => picture(40, 20).jpeg().withMetadata({ orientation: 6 }).toBuffer(),
  jpeg: (width = 32, height = 24) => picture(width, height, true).jpeg().toBuffer(),
  png: () => picture(30, 10).png().toBuffer(),
  webp: () => picture(16, 12).webp().toBuffer(),
  gif: () => picture(12, 8).gif().toBuffer(),
  tiff: () => picture(10, 10).tiff().toBuffer(),
  avif: () => picture(16, 16).avif().toBuffer(),

  /** A JPEG cut off in the middle of its image data. */
  truncatedJpeg: async () => {
    const whole = await picture(300, 300, true).jpeg({ quality: 90 }).toBuffer();
    return whole.subarray(0, Math.floor(whole.length * 0.6));
  },

  /**
   * A PNG whose header says 20000×20000 (400 megapixels) with a few bytes of image data: decoding
   * it would need gigabytes, reading its header needs nothing.
   */
  pixelBomb: () => {
    const chunk = (type: string, data: Buffer) => {
      const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
      const length = Buffer.alloc(4);
      length.writeUInt32BE(data.length);
      const crc = Buffer.alloc(4);
      crc.writeUInt32BE(crc32(body));
      return Buffer.concat([length, body, crc]);
    };
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(20000, 0);
    ihdr.writeUInt32BE(20000, 4);
    ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
    return Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk('IHDR', ihdr),
      chunk('IDAT', deflateSync(Buffer.alloc(1000))),
      chunk('IEND', Buffer.alloc(0)),
    ]);
  },

  /** A tiny but valid one-page PDF, with a correct cross-reference table. */
  pdf: () => {
    const objects = [
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Resources << >> >>',
      '<< /Length 21 >>\nstream\n0 0 1 rg 10 10 50 50 re f\nendstream',
    ];
    let body = '%PDF-1.4\n';
    const offsets: number[] = [];
    objects.forEach((object, index) => {
      offsets.push(Buffer.byteLength(body));
      body += `${index + 1} 0 obj\n${object}\nendobj\n`;
    });
    const xref = Buffer.byteLength(body);
    body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
    for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
    body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
    return Buffer.from(body, 'latin1');
  },

  text: () => Buffer.from('Notes on the lake house.\nTimber, glass and — ünïcödé — stone.\n'),
  csv: () => Buffer.from('room,area,floor\nkitchen,12.5,1\n"living, dining",40,1\nstudy,9,2\n'),
  html: () => Buffer.from('<!doctype html><script>alert(1)</script>'),
  svg: () => Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect/></svg>'),
  binary: () => Buffer.from([0x00, 0x01, 0x02, 0xfe, 0xff, 0x00, 0x10, 0x20]),
};

export interface UploadOptions {
  filename?: string;
  contentType?: string;
  description?: string;
  session?: string;
  headers?: Record<string, string>;
  method?: string;
}

/** Multipart upload over real HTTP, as a browser's FormData sends it. */
export async function uploadMultipart(
  server: TestServer,
  path: string,
  bytes: Buffer,
  options: UploadOptions = {},
) {
  const form = new FormData();
  if (options.description !== undefined) form.append('description', options.description);
  form.append(
    'file',
    new Blob([new Uint8Array(bytes)], { type: options.contentType ?? 'application/octet-stream' }),
    options.filename ?? 'file.bin',
  );
  const method = options.method ?? (path.endsWith('/cover') ? 'PUT' : 'POST');
  const response = await fetch(server.url + path, {
    method,
    headers: { authorization: options.session ?? server.adminSession, ...options.headers },
    body: form,
  });
  const text = await response.text();
  const body =
    text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
  checkAnswer(server.app, method, path, response, body);
  return { status: response.status, headers: response.headers, body };
}

export interface RawUploadOptions extends Omit<UploadOptions, 'filename' | 'description'> {
  /** The whole Content-Disposition header; `null` sends none. */
  disposition?: string | null;
}

/** Raw upload over real HTTP: the file's own bytes as the body, named by Content-Disposition. */
export async function uploadRaw(
  server: TestServer,
  path: string,
  bytes: Buffer,
  options: RawUploadOptions = {},
) {
  const disposition =
    options.disposition === undefined ? 'attachment; filename="file.bin"' : options.disposition;
  const method = options.method ?? (path.endsWith('/cover') ? 'PUT' : 'POST');
  const response = await fetch(server.url + path, {
    method,
    headers: {
      authorization: options.session ?? server.adminSession,
      'content-type': options.contentType ?? 'application/octet-stream',
      ...(disposition !== null && { 'content-disposition': disposition }),
      ...options.headers,
    },
    body: new Uint8Array(bytes),
  });
  const text = await response.text();
  const body =
    text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
  checkAnswer(server.app, method, path, response, body);
  return { status: response.status, headers: response.headers, body };
}

/** JSON upload with base64 data. */
export function uploadJson(
  server: TestServer,
  path: string,
  bytes: Buffer,
  options: UploadOptions = {},
) {
  return server.request(options.method ?? (path.endsWith('/cover') ? 'PUT' : 'POST'), path, {
    body: {
      originalFilename: options.filename ?? 'file.bin',
      ...(options.description !== undefined ? { description: options.description } : {}),
      data: bytes.toString('base64'),
    },
    ...(options.session ? { session: options.session } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
  });
}

/** GET of raw bytes. */
export async function download(
  server: TestServer,
  path: string,
  headers: Record<string, string> = {},
) {
  const response = await fetch(server.url + path, {
    headers: { authorization: server.adminSession, ...headers },
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  const json = response.headers.get('content-type')?.includes('json');
  checkAnswer(server.app, 'GET', path, response, json ? JSON.parse(bytes.toString()) : bytes);
  return { status: response.status, headers: response.headers, bytes };
}
