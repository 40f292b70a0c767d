import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const fromRoot = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/*
 * The headless server as one ES module, out/server/cli.js (`npm run build:server`). Running the
 * build rather than the TypeScript under tsx saves the compile on every start (about a second).
 */
export default defineConfig({
  build: {
    ssr: fromRoot('cli.ts'),
    outDir: fromRoot('../out/server'),
    emptyOutDir: true,
    target: 'node20',
    sourcemap: true,
    // The maps name the sources without carrying them: with --enable-source-maps Node reads and parses
    // every map as its module loads, and the sources were three quarters of their 6 MB.
    rolldownOptions: { output: { entryFileNames: 'cli.js', sourcemapExcludeSources: true } },
  },
  ssr: {
    // Every package is part of the one bundle, so that a start resolves, reads and wraps fewer
    // small CommonJS files (474 at an empty start before, 147 now). Those that load files of
    // their own at run time stay external and load from node_modules: sharp and its native
    // binaries, pino (its transport worker), pino-pretty (loaded by name), swagger-ui (its static
    // assets), pg's optional native binding. What `lazyRequire` loads on first use (sharp, Ajv,
    // fast-json-stringify, sanitize-html, sorted-btree) comes from node_modules then.
    noExternal: true,
    external: [
      'sharp',
      'pdfkit',
      'pino',
      'pino-pretty',
      'thread-stream',
      '@fastify/swagger-ui',
      'pg-native',
    ],
  },
  logLevel: 'warn',
});
