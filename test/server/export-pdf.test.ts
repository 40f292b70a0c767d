import { inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures, uploadMultipart } from '../helpers/file-fixtures';
import { portfolioBody, startTestServer, type TestServer } from '../helpers/test-server';

/** Pages of a PDF as pdfkit writes it: one `/Type /Page` object each (uncompressed dictionaries). */
const pageCount = (pdf: Buffer) => pdf.toString('latin1').match(/\/Type \/Page\b/g)?.length ?? 0;

/** The text drawn in a PDF: pdfkit's deflated content streams hold it as hex strings. */
function textOf(pdf: Buffer): string {
  const raw = pdf.toString('latin1');
  let text = '';
  for (const match of raw.matchAll(/stream\n([\s\S]*?)\nendstream/g)) {
    let content: string;
    try {
      content = inflateSync(Buffer.from(match[1]!, 'latin1')).toString('latin1');
    } catch {
      continue;
    }
    for (const hex of content.matchAll(/<([0-9a-fA-F]+)>/g))
      text += Buffer.from(hex[1]!, 'hex').toString('latin1');
  }
  return text;
}

describe('printable catalogue: GET /api/v1/export?format=pdf (DESIGN §15)', () => {
  let s: TestServer;
  let viewer: string;
  beforeAll(async () => {
    s = await startTestServer();
    viewer = await s.userSession('pdf-viewer', 'viewer');
    const published = await s.request('POST', '/api/v1/portfolio', {
      body: portfolioBody({ projectTitle: 'Printed vase', memberBarcode: 'PDF-SECRET-1' }),
    });
    await s.request('PUT', `/api/v1/portfolio/${published.body.portfolioId}`, {
      body: portfolioBody({ projectTitle: 'Printed vase', command: 'publish' }),
    });
    await uploadMultipart(
      s,
      `/api/v1/portfolio/${published.body.portfolioId}/cover`,
      await fixtures.jpeg(),
      { filename: 'vase.jpg' },
    );
    await s.request('POST', '/api/v1/portfolio', {
      body: portfolioBody({ projectTitle: 'Draft teapot' }),
    });
  });
  afterAll(() => s.close());

  const catalogue = async (query: string, session = s.adminSession) => {
    const response = await fetch(`${s.url}/api/v1/export?format=pdf${query}`, {
      headers: { authorization: session },
    });
    return { response, pdf: Buffer.from(await response.arrayBuffer()) };
  };

  it('is a real PDF: a cover page, then a page per portfolio, with their titles', async () => {
    const { response, pdf } = await catalogue('');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-disposition')).toMatch(/portfolios-.*\.pdf/);
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(pdf.subarray(-6).toString('latin1')).toContain('%%EOF');
    expect(pageCount(pdf)).toBe(3);
    const text = textOf(pdf);
    for (const words of ['Portfolio catalogue', '2 portfolios', 'Printed vase', 'Draft teapot'])
      expect(text).toContain(words);
    expect(text).not.toContain('PDF-SECRET-1');
  });

  it('holds only what the caller may see, or the selection', async () => {
    const seen = (await catalogue('', viewer)).pdf;
    expect(pageCount(seen)).toBe(2);
    expect(textOf(seen)).toContain('Printed vase');
    expect(textOf(seen)).not.toContain('Draft teapot');
    expect(pageCount((await catalogue('&filter=projectTitle:teapot')).pdf)).toBe(2);
  });
});
