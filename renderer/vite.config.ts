import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const rendererRoot = fileURLToPath(new URL('.', import.meta.url));
const apiTarget = process.env.PORTFOLIO_API ?? 'http://127.0.0.1:8080';

export default defineConfig({
  root: rendererRoot,
  // Absolute base: the server answers index.html for deep client routes such as
  // /portfolios/abc/edit, where a relative './assets/...' would resolve to the wrong folder.
  // The Electron window loads the same origin from the embedded server, so '/' works there too.
  base: '/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../out/renderer', import.meta.url)),
    emptyOutDir: true,
    // Stated rather than left to the defaults: electron-vite's renderer preset would otherwise
    // build for Electron's Chromium only and unminified, and its out/renderer is also what the
    // server hands to browsers on the LAN.
    // Browsers "widely available" by Baseline, spelled as electron-vite accepts (it warns on
    // anything but "chrome…"/"es…"): ES2022 syntax, and CSS lowered for those browsers.
    target: 'es2022',
    cssTarget: ['chrome107', 'edge107', 'firefox104', 'safari16'],
    minify: true,
    // The Electron CSP forbids inline scripts and data: fonts; keep every asset a real file.
    assetsInlineLimit: 0,
    sourcemap: true,
    // Loaded from the local server or disk, never over a slow network: one bundle is fine.
    chunkSizeWarningLimit: 800,
  },
  server: {
    host: '127.0.0.1',
    port: 5173,
    proxy: { '/api': { target: apiTarget, changeOrigin: true } },
  },
  preview: {
    proxy: { '/api': { target: apiTarget, changeOrigin: true } },
  },
});
