import { createRequire } from 'node:module';

const requireCjs = createRequire(import.meta.url);

/**
 * A CommonJS package loaded on first use, not at start: for packages that take tens of
 * milliseconds to load (native libraries, parsers) and that a start, which answers lists and
 * details first, does not need. The one createRequire of the server (a second top-level
 * `require` would clash with the one electron-vite adds to the main bundle).
 */
export function lazyRequire<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= requireCjs(name) as T);
}
