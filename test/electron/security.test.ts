import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import {
  contentSecurityPolicy,
  decideNavigation,
  externalUrl,
  isAppUrl,
  lockDownSession,
  lockDownWebContents,
} from '../../electron/main/security';

const ORIGIN = 'http://127.0.0.1:53124';

describe('navigation rules', () => {
  it('allows the server origin only, compared as parsed origins', () => {
    expect(isAppUrl(`${ORIGIN}/portfolios/abc`, [ORIGIN])).toBe(true);
    expect(isAppUrl(`${ORIGIN}`, [`${ORIGIN}/`])).toBe(true);
    expect(isAppUrl('HTTP://127.0.0.1:53124/x', [ORIGIN])).toBe(true);
    // Prefix tricks that a startsWith check would let through.
    expect(isAppUrl('http://127.0.0.1:53124.evil.example/', [ORIGIN])).toBe(false);
    expect(isAppUrl('http://127.0.0.1:531240/', [ORIGIN])).toBe(false);
    // Same host, other port or scheme: another origin.
    expect(isAppUrl('http://127.0.0.1:8080/', [ORIGIN])).toBe(false);
    expect(isAppUrl('https://127.0.0.1:53124/', [ORIGIN])).toBe(false);
    expect(isAppUrl('http://localhost:53124/', [ORIGIN])).toBe(false);
    expect(isAppUrl('file:///etc/passwd', [ORIGIN])).toBe(false);
    expect(isAppUrl('not a url', [ORIGIN])).toBe(false);
  });

  it('sends http(s) links elsewhere to the system browser, and nothing else', () => {
    expect(externalUrl('https://example.com/a?b=c')).toBe('https://example.com/a?b=c');
    expect(externalUrl('http://192.168.1.20:8080/')).toBe('http://192.168.1.20:8080/');
    for (const url of [
      'file:///C:/Windows/System32/calc.exe',
      'smb://server/share',
      'javascript:alert(1)',
      'mailto:a@example.com',
      'ms-msdt:/id',
      'https://user:pass@example.com/',
      '',
    ]) {
      expect(externalUrl(url)).toBeNull();
    }
  });

  it('decides a navigation in one step', () => {
    expect(decideNavigation(`${ORIGIN}/users`, [ORIGIN])).toEqual({ allow: true });
    expect(decideNavigation('https://example.com/', [ORIGIN])).toEqual({
      allow: false,
      openExternally: 'https://example.com/',
    });
    expect(decideNavigation('file:///etc/passwd', [ORIGIN])).toEqual({
      allow: false,
      openExternally: null,
    });
  });
});

describe('content security policy', () => {
  it('forbids inline scripts and foreign origins in production', () => {
    const policy = contentSecurityPolicy();
    expect(policy).toContain("script-src 'self'");
    expect(policy).not.toContain('unsafe');
    expect(policy).toContain("object-src 'none'");
    expect(policy).toContain("frame-ancestors 'none'");
  });

  it('relaxes only what the Vite dev server needs in development', () => {
    expect(contentSecurityPolicy(true)).toContain("script-src 'self' 'unsafe-inline'");
  });
});

class FakeWebContents extends EventEmitter {
  openHandler: ((details: { url: string }) => { action: string }) | null = null;
  setWindowOpenHandler(handler: (details: { url: string }) => { action: string }) {
    this.openHandler = handler;
  }
}

function navigationEvent(url: string) {
  return { url, preventDefault: vi.fn() };
}

describe('window lockdown', () => {
  function setup() {
    const contents = new FakeWebContents();
    const openExternal = vi.fn();
    lockDownWebContents(contents as any, { origins: () => [ORIGIN], openExternal });
    return { contents, openExternal };
  }

  it('keeps navigation on the server origin and opens other http(s) pages externally', () => {
    const { contents, openExternal } = setup();
    const inside = navigationEvent(`${ORIGIN}/portfolios/new`);
    contents.emit('will-navigate', inside);
    expect(inside.preventDefault).not.toHaveBeenCalled();

    const outside = navigationEvent('https://example.com/');
    contents.emit('will-navigate', outside);
    expect(outside.preventDefault).toHaveBeenCalled();
    expect(openExternal).toHaveBeenCalledWith('https://example.com/');

    const file = navigationEvent('file:///etc/passwd');
    contents.emit('will-navigate', file);
    expect(file.preventDefault).toHaveBeenCalled();
    expect(openExternal).toHaveBeenCalledTimes(1);
  });

  it('blocks redirects away from the app and <webview> tags', () => {
    const { contents } = setup();
    const redirect = navigationEvent('https://evil.example/');
    contents.emit('will-redirect', redirect);
    expect(redirect.preventDefault).toHaveBeenCalled();
    const webview = { preventDefault: vi.fn() };
    contents.emit('will-attach-webview', webview);
    expect(webview.preventDefault).toHaveBeenCalled();
  });

  it('denies every new window, opening http(s) ones in the system browser', () => {
    const { contents, openExternal } = setup();
    expect(contents.openHandler!({ url: 'https://example.com/doc' })).toEqual({ action: 'deny' });
    expect(openExternal).toHaveBeenCalledWith('https://example.com/doc');
    expect(contents.openHandler!({ url: `${ORIGIN}/portfolios/x` })).toEqual({ action: 'deny' });
    expect(contents.openHandler!({ url: 'file:///tmp/x.html' })).toEqual({ action: 'deny' });
    expect(openExternal).toHaveBeenCalledTimes(2);
  });
});

describe('session lockdown', () => {
  function setup() {
    const handlers: Record<string, any> = {};
    const session = {
      setPermissionRequestHandler: (handler: unknown) => (handlers.request = handler),
      setPermissionCheckHandler: (handler: unknown) => (handlers.check = handler),
      webRequest: { onHeadersReceived: (handler: unknown) => (handlers.headers = handler) },
    };
    lockDownSession(session as any, { origins: () => [ORIGIN], openExternal: vi.fn() });
    return handlers;
  }

  it('denies every permission request and check', () => {
    const handlers = setup();
    for (const permission of ['media', 'geolocation', 'notifications', 'openExternal']) {
      const callback = vi.fn();
      handlers.request({}, permission, callback, {});
      expect(callback).toHaveBeenCalledWith(false);
      expect(handlers.check({}, permission, ORIGIN, {})).toBe(false);
    }
  });

  it('adds the CSP to responses from the app origin only', () => {
    const handlers = setup();
    const callback = vi.fn();
    handlers.headers(
      { url: `${ORIGIN}/`, responseHeaders: { 'content-type': ['text/html'] } },
      callback,
    );
    expect(callback).toHaveBeenCalledWith({
      responseHeaders: {
        'content-type': ['text/html'],
        'Content-Security-Policy': [contentSecurityPolicy()],
      },
    });
    const other = vi.fn();
    handlers.headers({ url: 'https://example.com/', responseHeaders: {} }, other);
    expect(other).toHaveBeenCalledWith({});
  });
});
