import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.{ts,tsx}'],
    exclude: ['test/e2e/**', 'node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Component tests (`@vitest-environment happy-dom`) run on a page with an http origin.
    environmentOptions: { happyDOM: { url: 'http://localhost:5173/' } },
  },
});
