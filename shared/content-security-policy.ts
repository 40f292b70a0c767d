/**
 * The UI's Content-Security-Policy, one definition for the server (which sends it with
 * index.html) and the Electron shell (which adds it to every response the window loads). No
 * inline scripts or styles, nothing from other origins. Images also come from blob: URLs,
 * because files are fetched with the session header and shown as object URLs. In development
 * the Vite dev server needs its inline React-refresh preamble and a WebSocket for hot reload.
 */
export function contentSecurityPolicy(development = false): string {
  return [
    "default-src 'self'",
    development ? "script-src 'self' 'unsafe-inline'" : "script-src 'self'",
    development ? "style-src 'self' 'unsafe-inline'" : "style-src 'self'",
    "img-src 'self' blob: data:",
    development ? "connect-src 'self' ws://127.0.0.1:* ws://localhost:*" : "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}
