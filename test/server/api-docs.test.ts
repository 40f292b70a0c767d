import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

describe('/docs', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('sends a strict CSP and security headers with the UI and the document', async () => {
    for (const path of ['/docs', '/docs/', '/docs/json', '/docs/static/swagger-ui.css']) {
      const response = await server.request('GET', path, { session: null });
      expect(response.status, path).toBe(200);
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("default-src 'self'");
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).toContain("object-src 'none'");
      expect(csp, path).not.toMatch(
        /https:|upgrade-insecure-requests|unsafe-eval|script-src [^;]*unsafe-inline/,
      );
      expect(response.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(response.headers.get('x-frame-options'), path).toBe('DENY');
      expect(response.headers.get('referrer-policy'), path).toBe('no-referrer');
    }
  });

  it('leaves the API answers alone', async () => {
    const response = await server.request('GET', '/api/v1/appauth');
    expect(response.headers.get('content-security-policy')).toBeNull();
  });

  describe.runIf(existsSync(CHROMIUM))('in Chromium', () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    });
    afterAll(() => browser?.close());

    it('still renders the operations, with no CSP violation', async () => {
      const page = await browser.newPage();
      const refused: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy|Refused to/i.test(message.text()))
          refused.push(message.text());
      });
      await page.goto(`${server.url}/docs`);
      await page
        .locator('.opblock-summary-path', { hasText: '/api/v1/portfolio' })
        .first()
        .waitFor();
      expect(await page.locator('.opblock').count()).toBeGreaterThan(10);
      expect(refused).toEqual([]);
    });
  });
});
