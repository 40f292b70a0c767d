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
  logLevel: 'warn',
});
