/**
 * In development (`electron-vite dev`) the window loads the Vite dev server, which proxies /api
 * to the embedded server; the proxy is configured before the app starts, so the embedded
 * server listens on this known port instead of a free one. Shared by electron.vite.config.ts.
 */
export function devApiPort(env: NodeJS.ProcessEnv = process.env): number {
  const port = Number(env.PORTFOLIO_DEV_API_PORT ?? 17321);
  return Number.isInteger(port) && port > 0 && port < 65536 ? port : 17321;
}
