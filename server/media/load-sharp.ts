import { createRequire } from 'node:module';
import type Sharp from 'sharp';

const requireCjs = createRequire(import.meta.url);
let sharp: typeof Sharp | undefined;

/**
 * sharp, loaded on first use: loading libvips takes tens of milliseconds, and a start (which
 * answers lists and details first) should not wait for it.
 */
export function loadSharp(): typeof Sharp {
  return (sharp ??= requireCjs('sharp') as typeof Sharp);
}
