import { copyFile, mkdir } from 'node:fs/promises';
import { deflateSync } from 'node:zlib';
import AxeBuilder from '@axe-core/playwright';
import { type APIRequestContext, type Page, expect } from '@playwright/test';
import type { CreatePortfolioBody, PortfolioCreated, Session } from '../../shared';

export const SCREENSHOT_DIR = 'test-results/screenshots';

/** A full-page screenshot of a main screen, for people to look at after the run. */
export async function screenshot(page: Page, name: string, docsCopy?: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const path = `${SCREENSHOT_DIR}/${name}.png`;
  // Toasts from earlier steps would cover the screen; start from the top like a fresh visit.
  for (const dismiss of await page.getByRole('button', { name: 'Dismiss notification' }).all()) {
    await dismiss.click({ timeout: 1000 }).catch(() => undefined);
  }
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path, fullPage: true, animations: 'disabled' });
  if (docsCopy) {
    await mkdir('docs', { recursive: true });
    await copyFile(path, `docs/${docsCopy}`);
  }
}

/** No serious or critical axe violations on what the page shows now. */
export async function expectAccessible(page: Page, screen: string): Promise<void> {
  const results = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'])
    .analyze();
  const serious = results.violations.filter(
    (violation) => violation.impact === 'serious' || violation.impact === 'critical',
  );
  const summary = serious.map(
    (violation) =>
      `${violation.id} (${violation.impact}): ${violation.help}\n  ${violation.nodes.map((node) => node.target.join(' ')).join('\n  ')}`,
  );
  expect(summary, `axe violations on ${screen}`).toEqual([]);
}

// --- Test files made on the fly: real bytes, so the server's type sniffing accepts them. ---

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/**
 * A PNG with a diagonal two-colour gradient, so thumbnails visibly show something. With
 * `noise`, random pixel jitter keeps it from compressing, to make an upload take a while.
 */
export function makePng(
  width: number,
  height: number,
  from: [number, number, number],
  to: [number, number, number],
  noise = 0,
): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // RGB
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3);
    for (let x = 0; x < width; x++) {
      const t = (x / width + y / height) / 2;
      for (let c = 0; c < 3; c++) {
        const jitter = noise ? (Math.random() - 0.5) * noise : 0;
        row[1 + x * 3 + c] = Math.max(
          0,
          Math.min(255, Math.round(from[c]! + (to[c]! - from[c]!) * t + jitter)),
        );
      }
    }
    rows.push(row);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A minimal one-page PDF. */
export function makePdf(text: string): Buffer {
  const stream = `BT /F1 24 Tf 72 720 Td (${text}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let pdf = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(pdf.length);
    pdf += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) pdf += `${String(offset).padStart(10, '0')} 00000 n \n`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, 'latin1');
}

// --- Direct API calls, to set up data and to act as "someone else" during a test. ---

export async function apiSignIn(
  request: APIRequestContext,
  username: string,
  password: string,
): Promise<string> {
  const response = await request.post('/api/v1/appauth', { data: { username, password } });
  expect(response.status(), await response.text()).toBe(200);
  return ((await response.json()) as Session).sessionId;
}

export async function apiCreatePortfolio(
  request: APIRequestContext,
  session: string,
  body: CreatePortfolioBody,
): Promise<PortfolioCreated> {
  const response = await request.post('/api/v1/portfolio', {
    data: body,
    headers: { Authorization: session },
  });
  expect(response.status(), await response.text()).toBe(201);
  return (await response.json()) as PortfolioCreated;
}

export async function apiUpdatePortfolio(
  request: APIRequestContext,
  session: string,
  portfolioId: string,
  body: Record<string, unknown>,
) {
  const response = await request.put(`/api/v1/portfolio/${portfolioId}`, {
    data: body,
    headers: { Authorization: session },
  });
  expect(response.status(), await response.text()).toBe(200);
}

export async function apiUploadCover(
  request: APIRequestContext,
  session: string,
  portfolioId: string,
  name: string,
  png: Buffer,
) {
  const response = await request.put(`/api/v1/portfolio/${portfolioId}/cover`, {
    headers: { Authorization: session },
    multipart: { file: { name, mimeType: 'image/png', buffer: png } },
  });
  expect(response.status(), await response.text()).toBeLessThan(300);
}
