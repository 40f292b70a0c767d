import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const fromRoot = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/*
 * The headless server as one ES module, out/server/cli.js (`npm run build:server`). Running the
 * build rather than the TypeScript under tsx saves the compile on every start (about a second);
 * packages stay external and load from node_modules, sharp's native binaries included.
 */
export default defineConfig({
  build: {
    ssr: fromRoot('cli.ts'),
    outDir: fromRoot('../out/server'),
    emptyOutDir: true,
    target: 'node20',
    sourcemap: true,
    rolldownOptions: { output: { entryFileNames: 'cli.js' } },
  },
  ssr: {
    // Pure-JS ES modules made of many small files load far faster as part of one bundle (TypeBox
    // alone was 100 ms of imports at every start). Packages with native code or files of their own
    // to load at run time (sharp, pino's transport worker, swagger-ui's assets) stay external.
    noExternal: ['@sinclair/typebox', '@fastify/type-provider-typebox'],
  },
  logLevel: 'warn',
});
