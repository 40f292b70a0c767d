import { fileURLToPath } from 'node:url';
import { defineConfig } from 'electron-vite';
import type { Plugin } from 'vite';
import { devApiPort } from './electron/main/dev-server';
import rendererConfig from './renderer/vite.config';

const fromRoot = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/*
 * Main and preload are bundled for Node/Electron; every package in `dependencies` stays
 * external (electron-vite's default), so native sharp and its @img binaries load from
 * node_modules (unpacked from the asar, see electron-builder.yml). The renderer reuses the
 * browser build's settings, so `npm run build` and `npm run build:renderer` make the same UI.
 */
/**
 * electron-vite's renderer preset forces `base: './'` for production builds, made for windows
 * that load index.html from disk. This window loads the embedded server's origin, and the same
 * out/renderer is served to browsers, where a relative './assets/…' under a deep link such as
 * /portfolios/abc resolves to /portfolios/assets/… and the page stays blank. A plugin's config
 * hook runs after the preset's, so the absolute base of renderer/vite.config.ts wins again.
 */
const absoluteBase: Plugin = {
  name: 'portfolio:absolute-base',
  config: () => ({ base: rendererConfig.base }),
};

export default defineConfig({
  main: {
    build: {
      outDir: fromRoot('out/main'),
      lib: { entry: fromRoot('electron/main/index.ts') },
      externalizeDeps: true,
      sourcemap: true,
      rolldownOptions: { external: ['sharp', /^@img\//] },
    },
  },
  preload: {
    build: {
      outDir: fromRoot('out/preload'),
      // A sandboxed preload is loaded as a classic script: CommonJS in one file.
      lib: {
        entry: fromRoot('electron/preload/index.ts'),
        formats: ['cjs'],
        fileName: () => 'index.cjs',
      },
      externalizeDeps: true,
    },
  },
  renderer: {
    ...rendererConfig,
    plugins: [...(rendererConfig.plugins ?? []), absoluteBase],
    root: fromRoot('renderer'),
    build: {
      ...rendererConfig.build,
      outDir: fromRoot('out/renderer'),
      rolldownOptions: { input: fromRoot('renderer/index.html') },
    },
    server: {
      ...rendererConfig.server,
      // `electron-vite dev`: the embedded server listens on this port (electron/main/dev-server.ts).
      proxy: { '/api': { target: `http://127.0.0.1:${devApiPort()}`, changeOrigin: true } },
    },
  },
});
