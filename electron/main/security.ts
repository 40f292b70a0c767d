import type { Session, WebContents } from 'electron';
import { contentSecurityPolicy } from '../../shared/content-security-policy';

/** Added by the shell to every response the window loads, on top of the server's own header,
 * so the window stays locked down even if the server's headers change. */
export { contentSecurityPolicy };

function parse(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

/**
 * Whether `url` belongs to one of `origins`, by parsed origin: a string prefix check would let
 * http://127.0.0.1:5000.evil.example through for http://127.0.0.1:5000.
 */
export function isAppUrl(url: string, origins: readonly string[]): boolean {
  const parsed = parse(url);
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) return false;
  return origins.some((origin) => parse(origin)?.origin === parsed.origin);
}

/**
 * The URL to hand to the system browser, or null. Only http(s): `file:`, `smb:`, custom
 * protocol handlers and the like can run programs through the OS. URLs with credentials are
 * refused too, since they are a classic way to disguise the real host.
 */
export function externalUrl(url: string): string | null {
  const parsed = parse(url);
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) return null;
  if (parsed.username || parsed.password) return null;
  return parsed.href;
}

export type NavigationDecision = { allow: true } | { allow: false; openExternally: string | null };

/** A top-level navigation: stays in the window when it is the app, else goes to the browser. */
export function decideNavigation(url: string, origins: readonly string[]): NavigationDecision {
  if (isAppUrl(url, origins)) return { allow: true };
  return { allow: false, openExternally: externalUrl(url) };
}

export interface SecurityOptions {
  /** The origins the window may show: the embedded server (and the dev server in development). */
  origins: () => readonly string[];
  openExternal: (url: string) => Promise<void> | void;
  development?: boolean;
}

type ShellSession = Pick<Session, 'setPermissionRequestHandler' | 'setPermissionCheckHandler'> & {
  webRequest: Pick<Session['webRequest'], 'onHeadersReceived'>;
};

/**
 * Session-wide lockdown: every permission (camera, notifications, geolocation, ...) is denied,
 * the app needs none; every response from the app's origins carries the CSP.
 */
export function lockDownSession(session: ShellSession, options: SecurityOptions): void {
  session.setPermissionRequestHandler((_webContents, _permission, callback) => callback(false));
  session.setPermissionCheckHandler(() => false);
  const policy = contentSecurityPolicy(options.development);
  session.webRequest.onHeadersReceived((details, callback) => {
    if (!isAppUrl(details.url, options.origins())) return callback({});
    callback({
      responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [policy] },
    });
  });
}

type ShellWebContents = Pick<WebContents, 'on' | 'setWindowOpenHandler'>;

/**
 * Per-window lockdown, applied to every WebContents the app creates: navigation stays on the
 * app's origins, http(s) links elsewhere open in the system browser, new windows and
 * <webview>s are refused.
 */
export function lockDownWebContents(contents: ShellWebContents, options: SecurityOptions): void {
  const handle = (event: { preventDefault(): void }, url: string) => {
    const decision = decideNavigation(url, options.origins());
    if (decision.allow) return;
    event.preventDefault();
    if (decision.openExternally) void options.openExternal(decision.openExternally);
  };
  contents.on('will-navigate', (event) => handle(event, event.url));
  contents.on('will-redirect', (event) => handle(event, event.url));
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    const target = externalUrl(url);
    if (target) void options.openExternal(target);
    return { action: 'deny' };
  });
}
